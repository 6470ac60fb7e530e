//go:build unix

package config

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO in place of config.json must not hang the hook.
func TestConfigFIFO(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	if err := syscall.Mkfifo(Path(dir), 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() { _, err := Load(dir); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "a FIFO") {
			t.Errorf("Load = %v, want an error naming the FIFO", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Load hangs on a FIFO config.json")
	}
}
