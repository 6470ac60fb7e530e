package state

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Seams for tests that count fsyncs.
var (
	syncFile      = (*os.File).Sync
	syncDirectory = syncDir
)

// WriteFileAtomic replaces path with data so that a crash, even a power
// loss, leaves either the old or the new content: temp file in the same
// directory, fsync, rename, then fsync of the directory where the platform
// allows it. Use it for the plan's files (state.json, tasks.md, task-T.md):
// they are the record of the work and cannot be rebuilt.
func WriteFileAtomic(path string, data []byte) error {
	return writeFile(path, data, true)
}

// WriteFileQuick replaces path with data through a temp file and a rename,
// without fsync. Readers and a crashed taskie process still see the old or
// the new content, never a mix, but after a power loss the file may be old,
// empty or missing. Use it only for data that is cheap to lose and that
// readers tolerate losing, such as the hook's per-session memory; it spares
// the hook's hot path two fsyncs (slow on macOS).
func WriteFileQuick(path string, data []byte) error {
	return writeFile(path, data, false)
}

// writeFile writes data to a temp file beside path (".<name>.tmp<digits>",
// which validation allows) and renames it over path; durable adds the
// fsyncs. The temp file is removed on every failure.
func writeFile(path string, data []byte, durable bool) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	// A rewritten file keeps its bits; a new one is 0644 less the umask.
	perm, keep := os.FileMode(0o644), false
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		perm, keep = fi.Mode().Perm(), true
	}
	f, err := createTemp(dir, "."+base+".tmp", perm, keep)
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	_, err = f.Write(data)
	if err == nil && durable {
		err = syncFile(f)
	}
	if err == nil && keep {
		err = f.Chmod(perm) // on the descriptor: the umask does not apply
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := rename(tmp, path); err != nil {
		return err
	}
	if durable {
		return syncDirectory(dir)
	}
	return nil
}

// createTemp creates a new file prefix<digits> in dir, O_EXCL: with perm
// less the umask for a new file, 0600 until its chmod when keep.
func createTemp(dir, prefix string, perm os.FileMode, keep bool) (*os.File, error) {
	if keep {
		perm = 0o600
	}
	var err error
	for range 100 {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10))
		var f *os.File
		f, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, err
}

// retryRename calls rename until it succeeds, fails with an error that
// transient rejects, or budget has passed, waiting 1 ms, 2 ms, 4 ms … (at
// most 100 ms) between tries. It returns the last error.
func retryRename(oldpath, newpath string, rename func(string, string) error, transient func(error) bool, budget time.Duration) error {
	deadline := time.Now().Add(budget)
	wait := time.Millisecond
	for {
		err := rename(oldpath, newpath)
		if err == nil || !transient(err) || !time.Now().Before(deadline) {
			return err
		}
		time.Sleep(min(wait, time.Until(deadline)))
		wait = min(2*wait, 100*time.Millisecond)
	}
}
