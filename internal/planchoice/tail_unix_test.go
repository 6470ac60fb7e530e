//go:build unix

package planchoice

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestReadTailFIFO: a FIFO with no writer would block a plain open forever.
func TestReadTailFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := ReadTail(path, 0)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("ReadTail on a FIFO succeeded, want an error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadTail blocked on a FIFO")
	}
}

func TestReadTailDevice(t *testing.T) {
	if b, err := ReadTail("/dev/zero", 16); err == nil {
		t.Errorf("ReadTail(/dev/zero) = %q, want an error", b)
	}
}
