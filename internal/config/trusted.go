package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/taskie-dev/taskie/internal/fsafe"
	"github.com/taskie-dev/taskie/internal/trust"
)

// maxPinned is the largest program file taskie pins by content: hashing
// a bigger one would slow every hook down.
const maxPinned = 256 << 20

// TrustState is what the user's trust store says of a repository's
// .taskie/config.json as it is now.
type TrustState struct {
	// Trusted: the file is trusted with exactly this content and every
	// program file it names inside the repository is unchanged.
	Trusted bool
	// Recorded: the store holds an entry for the file (with any content).
	Recorded bool
	// Changed lists the pinned program files (relative to the repository,
	// slash-separated) whose content differs from what was trusted.
	Changed []string
}

// CheckTrust reads the repository's config file (an absent one counts as
// empty: `taskie trust` also trusts a repository without one) and asks
// the user's trust store about it.
func CheckTrust(taskieDir string) (TrustState, error) {
	file := Path(taskieDir)
	_, data, err := readObject(file)
	if err != nil {
		return TrustState{}, err
	}
	return trustedByUser(file, data)
}

// trustedByUser asks the user's trust store. Without a place for a store
// nothing can have been trusted.
func trustedByUser(file string, data []byte) (TrustState, error) {
	s, err := trust.Open()
	if err != nil {
		return TrustState{}, nil
	}
	return checkTrust(s, file, data)
}

func checkTrust(s *trust.Store, file string, data []byte) (TrustState, error) {
	e, ok, err := s.Get(file)
	if err != nil || !ok {
		return TrustState{}, err
	}
	st := TrustState{Recorded: true}
	if e.SHA256 != trust.Hash(data) {
		return st, nil
	}
	if len(e.Pins) > 0 {
		root, err := fsafe.Open(repoRoot(e.File))
		if err != nil {
			return st, err
		}
		defer root.Close()
		for _, rel := range sortedKeys(e.Pins) {
			if sum, err := pinOf(root, rel); err != nil || sum != e.Pins[rel] {
				st.Changed = append(st.Changed, rel)
			}
		}
	}
	st.Trusted = len(st.Changed) == 0
	return st, nil
}

// repoRoot is the repository of a .taskie/config.json.
func repoRoot(configFile string) string { return filepath.Dir(filepath.Dir(configFile)) }

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Pins returns the pins of the program files inside the repository that
// progs name, for `taskie trust` to record: path relative to the
// repository → sha256 of the content (trust.Absent for a missing file).
// A program file that cannot be pinned (a symlink out of the repository, a
// FIFO, too large) is an error naming it.
func Pins(configFile string, progs []Program) (map[string]string, error) {
	key, err := trust.Key(configFile)
	if err != nil {
		return nil, err
	}
	rels := pinned(repoRoot(key), repoRoot(configFile), progs)
	if len(rels) == 0 {
		return nil, nil
	}
	root, err := fsafe.Open(repoRoot(key))
	if err != nil {
		return nil, err
	}
	defer root.Close()
	pins := map[string]string{}
	for _, rel := range rels {
		sum, err := pinOf(root, rel)
		if err != nil {
			return nil, fmt.Errorf("%s: cannot pin this program by its content: %w", rel, err)
		}
		pins[rel] = sum
	}
	return pins, nil
}

// pinned lists the files inside the repository at root (also reached as
// alt) that progs run: a program given as a path ("./tools/review.sh",
// "tools/review.sh", or an absolute path inside the repository) and every
// argument that is such a path ("python3 tools/review.py",
// "--script=tools/x.sh"). A bare name ("my-reviewer") is found on PATH, not
// in the repository. Relative paths are the reviewer's: it runs in the
// repository's root.
func pinned(root, alt string, progs []Program) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range progs {
		for i, arg := range p.Command {
			if i > 0 && strings.HasPrefix(arg, "-") {
				_, v, ok := strings.Cut(arg, "=") // --script=tools/x.sh
				if !ok {
					continue
				}
				arg = v
			}
			if !strings.Contains(arg, "/") && !strings.Contains(arg, string(filepath.Separator)) {
				continue
			}
			rel, ok := inside(root, alt, arg)
			if ok && !seen[rel] {
				seen[rel] = true
				out = append(out, rel)
			}
		}
	}
	sort.Strings(out)
	return out
}

// inside returns path relative to the repository when it names something
// in it.
func inside(root, alt, path string) (string, bool) {
	if !filepath.IsAbs(path) {
		rel := filepath.Clean(path)
		if rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", false
		}
		return filepath.ToSlash(rel), true
	}
	for _, r := range []string{root, alt} {
		rel, err := filepath.Rel(r, filepath.Clean(path))
		if err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.ToSlash(rel), true
		}
	}
	return "", false
}

// pinOf is the sha256 of the regular file rel inside root, trust.Absent
// when there is none.
func pinOf(root *fsafe.Root, rel string) (string, error) {
	f, err := root.OpenRead(filepath.FromSlash(rel))
	if errors.Is(err, fs.ErrNotExist) {
		return trust.Absent, nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, maxPinned+1))
	if err != nil {
		return "", err
	}
	if n > maxPinned {
		return "", fmt.Errorf("larger than %d MiB", maxPinned>>20)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
