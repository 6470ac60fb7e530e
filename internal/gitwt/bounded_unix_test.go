//go:build unix

package gitwt

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/internal/fsafe"
)

// A FIFO or a huge file in place of a .git file, HEAD or commondir is an
// error at once, never a hang or an unbounded read.
func TestGitFilesAreBounded(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, ".git")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := readGitFile(fifo); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, fsafe.ErrNotRegular) {
			t.Errorf("FIFO .git file: %v, want ErrNotRegular", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO .git file hangs")
	}

	gitdir := filepath.Join(dir, "gd")
	if err := os.MkdirAll(gitdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gitdir, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(gitdir, "commondir")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 1<<30); err != nil {
		t.Fatal(err)
	}
	if _, err := layoutOf(dir, gitdir, true); !errors.Is(err, fsafe.ErrTooLarge) {
		t.Errorf("1 GiB commondir: %v, want ErrTooLarge", err)
	}
}
