package fsafe

import (
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync/atomic"
)

// listHook, when set (SetListHook), is told of every directory listed:
// tests count a command's listings with it; unset it costs one atomic load.
var listHook atomic.Pointer[func(path string)]

// SetListHook makes fn see the path of every directory that Root.ReadDir,
// Dir.ReadDir and Dir.EachName list, until restore is called. For tests (the hook's count a
// stop's listings of its plan): fn must be safe for concurrent use.
func SetListHook(fn func(path string)) (restore func()) {
	old := listHook.Swap(&fn)
	return func() { listHook.Store(old) }
}

func listing(path string) {
	if fn := listHook.Load(); fn != nil {
		(*fn)(path)
	}
}

// Dir is one directory of the repository, opened once for a burst of reads
// of the files directly in it (one snapshot of a plan): a plain regular
// file is then opened with one lookup relative to the directory instead of
// a walk from the repository root. Anything else (a symbolic link, a name
// with a separator, something that is not a regular file) is handed to the
// Root, so a Dir reads exactly what the Root would read and refuses what it
// would refuse, with the same errors. Writes go through the Root.
type Dir struct {
	parent *Root
	rel    string
	f      *os.File
}

// OpenDir opens the directory rel for reading. Close it when done.
func (r *Root) OpenDir(rel string) (*Dir, error) {
	if err := r.precheck(rel, fs.ModeDir, "lists"); err != nil {
		return nil, err
	}
	f, err := r.root.OpenFile(rel, os.O_RDONLY|nonblockFlag|dirFlag, 0)
	if err != nil {
		if kerr := r.checkKind(rel, fs.ModeDir, "lists"); kerr != nil {
			return nil, kerr
		}
		return nil, r.wrap(rel, err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.IsDir() {
		err = r.wrongKind(rel, fi.Mode(), fs.ModeDir, "lists")
	}
	if err != nil {
		f.Close()
		return nil, r.wrap(rel, err)
	}
	return &Dir{parent: r, rel: rel, f: f}, nil
}

// Sub is Root.OpenDir of the directory name in this one: a plain
// directory (not a link) costs one lookup relative to this directory.
func (d *Dir) Sub(name string) (*Dir, error) {
	rel := path.Join(d.rel, name)
	if f, ok := d.openSubPlain(name); ok {
		return &Dir{parent: d.parent, rel: rel, f: f}, nil
	}
	return d.parent.OpenDir(rel)
}

// Close releases the directory.
func (d *Dir) Close() error { return d.f.Close() }

// ReadDir lists the directory, sorted by name.
func (d *Dir) ReadDir() ([]fs.DirEntry, error) {
	listing(d.parent.Path(d.rel))
	entries, err := listDir(d.f, d.parent.Path(d.rel))
	if err != nil {
		return nil, d.parent.wrap(d.rel, err)
	}
	sortByName(entries)
	return entries, nil
}

// sortByName sorts entries by name, comparing names taken once: a big
// plan lists tens of thousands of files, and a Name call per comparison
// was most of the cost of listing them.
func sortByName(entries []fs.DirEntry) {
	type named struct {
		name string
		e    fs.DirEntry
	}
	ns := make([]named, len(entries))
	for i, e := range entries {
		ns[i] = named{e.Name(), e}
	}
	slices.SortFunc(ns, func(a, b named) int { return strings.Compare(a.name, b.name) })
	for i, n := range ns {
		entries[i] = n.e
	}
}

// ReadFile is Root.ReadFile of the file name in the directory.
func (d *Dir) ReadFile(name string) ([]byte, error) {
	rel := path.Join(d.rel, name)
	if data, ok, err := d.readPlain(name, LimitFor(rel)); ok {
		return data, err
	}
	f, ok, err := d.openPlain(name)
	if !ok {
		return d.parent.ReadFile(rel)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return d.parent.readOpen(f, rel, LimitFor(rel))
}

// OpenAppend is Root.OpenAppend of the file name in the directory: a log
// among many (the hook writes one line to each of 50 plans' logs) opened
// with one lookup, not a walk from the repository root.
func (d *Dir) OpenAppend(name string) (*os.File, error) {
	if f, ok := d.appendPlain(name); ok {
		return f, nil
	}
	return d.parent.OpenAppend(path.Join(d.rel, name))
}

// ReadRegular is ReadFile of a name that is a regular file directly in the
// directory, not a link to one: anything else reads as missing
// (fs.ErrNotExist), as a listing's regular entries would show it. A file
// read this way costs no listing of the directory.
func (d *Dir) ReadRegular(name string) ([]byte, error) {
	rel := path.Join(d.rel, name)
	if data, ok, err := d.readPlain(name, LimitFor(rel)); ok {
		return data, err
	}
	f, ok, err := d.openPlain(name)
	if !ok {
		fi, err := d.parent.Lstat(rel)
		if err != nil {
			return nil, err
		}
		if !plainName(name) || !fi.Mode().IsRegular() {
			return nil, d.parent.wrap(rel, fs.ErrNotExist)
		}
		return d.parent.ReadFile(rel)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return d.parent.readOpen(f, rel, LimitFor(rel))
}

// ReadTail is Root.ReadTail of the file name in the directory.
func (d *Dir) ReadTail(name string, n int64) ([]byte, int64, error) {
	rel := path.Join(d.rel, name)
	f, ok, err := d.openPlain(name)
	if !ok {
		return d.parent.ReadTail(rel, n)
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	return d.parent.tailOpen(f, rel, n)
}

// plainName reports a single path component.
func plainName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, separators)
}
