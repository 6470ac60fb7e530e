package fsafe

import (
	"io"
	"os"
)

// OpenRead opens the regular file rel for reading, for streaming a large
// file (the event log) without holding it whole.
func (r *Root) OpenRead(rel string) (*os.File, error) {
	return r.openRegular(rel, os.O_RDONLY, 0, "reads")
}

// ReadTail returns at most the last n bytes of the regular file rel, and
// the file's size.
func (r *Root) ReadTail(rel string, n int64) ([]byte, int64, error) {
	f, err := r.OpenRead(rel)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	return r.tailOpen(f, rel, n)
}

// tailOpen is ReadTail of the regular file f, opened from rel.
func (r *Root) tailOpen(f *os.File, rel string, n int64) ([]byte, int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, r.wrap(rel, err)
	}
	size := fi.Size()
	off := max(0, size-n)
	buf := make([]byte, size-off)
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		return nil, size, r.wrap(rel, err)
	}
	return buf, size, nil
}
