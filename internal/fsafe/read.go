package fsafe

import (
	"io"
	"os"
)

// ReadFile returns the contents of the regular file rel. A missing file is
// an error matching fs.ErrNotExist; anything other than a regular file wraps
// ErrNotRegular; a path leading out of the repository wraps ErrOutsideRepo;
// a file over the limit of its kind (LimitFor) wraps ErrTooLarge, and
// nothing past the limit is read.
func (r *Root) ReadFile(rel string) ([]byte, error) {
	return r.readFile(rel, LimitFor(rel))
}

// ReadFileLimit is ReadFile for input that may be hostile: a file larger
// than limit bytes is an error wrapping ErrTooLarge, and nothing past the
// limit is read.
func (r *Root) ReadFileLimit(rel string, limit int64) ([]byte, error) {
	return r.readFile(rel, limit)
}

// readFile reads rel; limit < 0 means no limit.
func (r *Root) readFile(rel string, limit int64) ([]byte, error) {
	f, err := r.openRegular(rel, os.O_RDONLY, 0, "reads")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return r.readOpen(f, rel, limit)
}

// readOpen reads the regular file f, opened from rel.
func (r *Root) readOpen(f *os.File, rel string, limit int64) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, r.wrap(rel, err)
	}
	if limit >= 0 && fi.Size() > limit {
		return nil, r.tooLarge(rel, limit)
	}
	var src io.Reader = f
	if limit >= 0 {
		// The file may grow after the fstat; read one byte past the limit
		// to notice.
		src = io.LimitReader(f, limit+1)
	}
	data, err := io.ReadAll(src)
	if err != nil {
		return nil, r.wrap(rel, err)
	}
	if limit >= 0 && int64(len(data)) > limit {
		return nil, r.tooLarge(rel, limit)
	}
	return data, nil
}
