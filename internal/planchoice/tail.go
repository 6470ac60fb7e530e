package planchoice

import (
	"fmt"
	"io"
)

// DefaultTailSize is how much of a transcript's end ReadTail reads when
// asked for no particular size: 256 KiB.
const DefaultTailSize = 256 << 10

// ReadTail returns at most the last limit bytes of the regular file at path
// (DefaultTailSize when limit <= 0). Anything else (a FIFO, a device, a
// directory) is refused without blocking, since the path comes from the
// agent's hook input.
func ReadTail(path string, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = DefaultTailSize
	}
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	off := max(0, st.Size()-limit)
	buf := make([]byte, st.Size()-off)
	n, err := f.ReadAt(buf, off)
	if err != nil && err != io.EOF {
		return nil, err
	}
	return buf[:n], nil
}
