package events

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxLine is the longest event line a scan reads; a longer one is skipped
// with a warning, never fatal, and never held in memory.
const MaxLine = 16 << 20

// ScanLines calls fn with each line of r, without its newline, and its
// 1-based number; fn's error stops the scan and is returned. A line longer
// than max bytes is read past, not held, and handed to tooLong with its
// number: one huge line never breaks the lines after it.
func ScanLines(r io.Reader, max int, fn func(n int, line []byte) error, tooLong func(n int)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	for n := 1; ; n++ {
		chunk, err := br.ReadSlice('\n')
		line, over := chunk, len(chunk) > max+1
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the reader's buffer: gather it, up to max.
			buf = append(buf[:0], chunk...)
			for errors.Is(err, bufio.ErrBufferFull) {
				chunk, err = br.ReadSlice('\n')
				if !over && len(buf)+len(chunk) > max+1 {
					over, buf = true, buf[:0]
				}
				if !over {
					buf = append(buf, chunk...)
				}
			}
			line = buf
		}
		if err != nil && err != io.EOF {
			return err
		}
		line = bytes.TrimSuffix(line, []byte{'\n'})
		switch {
		case over || len(line) > max:
			tooLong(n)
		case len(line) > 0 || err == nil:
			if ferr := fn(n, line); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// tooLongWarning is the warning for line n of name being over MaxLine.
func tooLongWarning(name string, n int) string {
	return fmt.Sprintf("%s:%d: skipped an event line longer than %d MiB (not read)", name, n, MaxLine>>20)
}
