// Package trust records which repository config files the user has read and
// trusts to run programs, in the manner of direnv's `allow`: the store keeps
// the sha256 of each trusted file's bytes under the file's absolute path, so
// any change to a file revokes its trust. The programs inside the repository
// that the file names are pinned the same way (Entry.Pins): a script changed
// by a checkout of another branch is not the script the user trusted.
//
// The store is $XDG_STATE_HOME/taskie/trust.json (fallback
// ~/.local/state/taskie/trust.json), mode 0600, replaced atomically under a
// sidecar lock. It belongs to the user: a store that others can write is
// refused, as it would let them trust files in the user's name.
package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/taskie-dev/taskie/internal/fsafe"
)

// FileName is the store's name in the user's taskie state directory.
const FileName = "trust.json"

// lockTimeout is how long a change waits for another taskie's change.
const lockTimeout = 10 * time.Second

// Entry is one trusted file.
type Entry struct {
	File    string    `json:"file"`       // absolute path, directories resolved
	SHA256  string    `json:"sha256"`     // hex digest of the trusted bytes
	Trusted time.Time `json:"trusted_at"` // when the user trusted it
	// Pins maps each program file inside the repository that the trusted
	// file names (absolute path) to the sha256 of its content then, or to
	// Absent when there was no such file.
	Pins map[string]string `json:"pins,omitempty"`
}

// Absent is the pin of a program file that did not exist when the user
// trusted the config: one that appears later is a change.
const Absent = "absent"

// record is an Entry as stored, keyed by its file.
type record struct {
	SHA256  string            `json:"sha256"`
	Trusted time.Time         `json:"trusted_at"`
	Pins    map[string]string `json:"pins,omitempty"`
}

// document is the store's JSON layout.
type document struct {
	Version int               `json:"version"`
	Files   map[string]record `json:"files"`
}

// Store is the user's trust store.
type Store struct {
	path string
}

// Path returns where the user's store lives: $XDG_STATE_HOME/taskie/trust.json
// when XDG_STATE_HOME is an absolute path, else ~/.local/state/taskie/trust.json.
func Path() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "taskie", FileName), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no place for the trust store: set XDG_STATE_HOME or HOME: %w", err)
	}
	return filepath.Join(home, ".local", "state", "taskie", FileName), nil
}

// Open returns the user's store. The file need not exist yet.
func Open() (*Store, error) {
	p, err := Path()
	if err != nil {
		return nil, err
	}
	return At(p), nil
}

// At returns the store kept in the file path.
func At(path string) *Store { return &Store{path: path} }

// Path returns the store's file.
func (s *Store) Path() string { return s.path }

// Hash returns the hex sha256 of data, as the store records it.
func Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Key returns the name a file is trusted under: its absolute path with the
// directory's symlinks resolved, so that one file reached by two routes is
// one entry. The file itself need not exist (a revoke after deleting it).
func Key(file string) (string, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", err
	}
	dir, base := filepath.Split(abs)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return filepath.Join(dir, base), nil
}

// Get returns the entry for file, if there is one.
func (s *Store) Get(file string) (Entry, bool, error) {
	key, err := Key(file)
	if err != nil {
		return Entry{}, false, err
	}
	doc, err := s.read()
	if err != nil {
		return Entry{}, false, err
	}
	r, ok := doc.Files[key]
	return Entry{File: key, SHA256: r.SHA256, Trusted: r.Trusted, Pins: r.Pins}, ok, nil
}

// List returns every entry, by file name.
func (s *Store) List() ([]Entry, error) {
	doc, err := s.read()
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(doc.Files))
	for f, r := range doc.Files {
		out = append(out, Entry{File: f, SHA256: r.SHA256, Trusted: r.Trusted, Pins: r.Pins})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out, nil
}

// TrustPinned records that the user trusts file with the content data,
// replacing any earlier entry for it, and pins the program files the config names
// (see Entry.Pins).
func (s *Store) TrustPinned(file string, data []byte, pins map[string]string, now time.Time) (Entry, error) {
	key, err := Key(file)
	if err != nil {
		return Entry{}, err
	}
	if len(pins) == 0 {
		pins = nil
	}
	e := Entry{File: key, SHA256: Hash(data), Trusted: now.UTC().Truncate(time.Second), Pins: pins}
	err = s.change(func(doc *document) bool {
		doc.Files[key] = record{SHA256: e.SHA256, Trusted: e.Trusted, Pins: pins}
		return true
	})
	return e, err
}

// Revoke removes file's entry and reports whether there was one.
func (s *Store) Revoke(file string) (bool, error) {
	key, err := Key(file)
	if err != nil {
		return false, err
	}
	found := false
	err = s.change(func(doc *document) bool {
		_, found = doc.Files[key]
		delete(doc.Files, key)
		return found
	})
	return found, err
}

// change runs edit on the store under its lock and writes the result when
// edit reports a change.
func (s *Store) change(edit func(*document) bool) error {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return fmt.Errorf("trust store: %w", err)
	}
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	doc, err := s.read()
	if err != nil {
		return err
	}
	if !edit(&doc) {
		return nil
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(s.path, append(data, '\n'))
}

// lock takes the store's sidecar lock: the store itself is replaced by a
// rename, so a lock on it would protect nothing.
func (s *Store) lock() (func(), error) {
	root, err := fsafe.Open(filepath.Dir(s.path))
	if err != nil {
		return nil, fmt.Errorf("trust store: %w", err)
	}
	defer root.Close() // the lock keeps its own descriptor
	l, err := root.Lock(filepath.Base(s.path)+".lock", lockTimeout)
	if err != nil {
		return nil, fmt.Errorf("trust store: %w; try again when the other taskie is done", err)
	}
	return func() { _ = l.Unlock() }, nil
}

// read returns the store's content; a missing store is an empty one.
func (s *Store) read() (document, error) {
	doc := document{Version: 1, Files: map[string]record{}}
	st, err := os.Stat(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return doc, nil
	}
	if err != nil {
		return doc, err
	}
	if !st.Mode().IsRegular() {
		return doc, fmt.Errorf("%s: trust store is not a regular file", s.path)
	}
	if st.Mode().Perm()&0o022 != 0 {
		return doc, fmt.Errorf("%s: trust store is writable by other users (mode %s), so it is not used; run `chmod 600 %s`", s.path, st.Mode().Perm(), s.path)
	}
	data, err := os.ReadFile(s.path)
	if err != nil {
		return doc, err
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return doc, fmt.Errorf("%s: malformed trust store: %v; remove it and run `taskie trust` again where needed", s.path, err)
	}
	if doc.Files == nil {
		doc.Files = map[string]record{}
	}
	return doc, nil
}

// writeAtomic replaces path with data, mode 0600: temp file beside it,
// fsync, rename, fsync of the directory. The temp file never survives a
// failure.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after the rename
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
