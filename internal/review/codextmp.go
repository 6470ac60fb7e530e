package review

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// codexTmpPrefix names the directories that hold codex's schema and answer
// files: taskie-codex-<pid>-<random>, so that the next review can tell the
// one a killed review left (its pid is gone) from one still in use.
const codexTmpPrefix = "taskie-codex-"

// oldCodexTmpAge is when a directory named before the pid was part of the
// name (taskie-codex-<random>) counts as left behind: longer than any
// review may run.
const oldCodexTmpAge = time.Hour

// codexTempDir removes the directories dead reviews left in the temp
// directory, then makes this review's own.
func codexTempDir() (string, error) {
	removeStaleCodexDirs(os.TempDir(), time.Now())
	return os.MkdirTemp("", fmt.Sprintf("%s%d-", codexTmpPrefix, os.Getpid()))
}

// removeStaleCodexDirs removes, from dir, the codex directories of
// processes that no longer run, and those of the old naming older than
// oldCodexTmpAge. Only real directories of this user are touched, never a
// symlink. It returns the names it removed.
func removeStaleCodexDirs(dir string, now time.Time) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), codexTmpPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		fi, err := os.Lstat(path)
		if err != nil || !fi.IsDir() || !ownedByUs(fi) {
			continue
		}
		pidText, _, named := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		switch {
		case err != nil || pid <= 0:
			continue // not ours
		case !named && now.Sub(fi.ModTime()) < oldCodexTmpAge:
			continue // the old naming: a review may still use it
		case named && (pid == os.Getpid() || processAlive(pid)):
			continue
		}
		if os.RemoveAll(path) == nil {
			removed = append(removed, e.Name())
		}
	}
	return removed
}
