package state

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A reader (or an antivirus) holding the target open makes MoveFileEx fail
// with access denied; WriteFileAtomic waits for it to let go.
func TestWriteFileAtomicOverAnOpenFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p) // no FILE_SHARE_DELETE: blocks a replace
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p, p+".probe"); err == nil {
		t.Skip("this Windows lets a rename replace an open file")
	}
	time.AfterFunc(200*time.Millisecond, func() { f.Close() })
	if err := WriteFileAtomic(p, []byte("new")); err != nil {
		t.Fatalf("WriteFileAtomic while a reader had the file open for 200ms: %v", err)
	}
	if data, _ := os.ReadFile(p); string(data) != "new" {
		t.Errorf("content %q, want new", data)
	}
}
