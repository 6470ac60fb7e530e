package fsafe

import (
	"fmt"
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

// ReadPath reads the regular file at the absolute path p, for files that
// are not the repository's content but may sit beside it (git's own files,
// found through a .git file): non-blocking, regular files only, and at most
// limit bytes (over it, an error wrapping ErrTooLarge). A missing file
// matches fs.ErrNotExist.
func ReadPath(p string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|nonblockFlag, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w (%s); taskie only reads regular files", p, ErrNotRegular, kind(fi.Mode()))
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s: %w: more than %s", p, ErrTooLarge, size(limit))
	}
	if err := setBlocking(f); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: %w: more than %s", p, ErrTooLarge, size(limit))
	}
	return data, nil
}
