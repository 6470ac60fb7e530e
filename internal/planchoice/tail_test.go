package planchoice

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestReadTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.jsonl")
	data := bytes.Repeat([]byte("0123456789"), 100)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		limit int64
		want  []byte
	}{
		{name: "a file shorter than the limit is read whole", limit: 4096, want: data},
		{name: "only the last bytes of a longer file", limit: 15, want: data[len(data)-15:]},
		{name: "no limit means the default", limit: 0, want: data},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadTail(path, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tc.want) {
				t.Errorf("ReadTail = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestReadTailDefault(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.jsonl")
	data := bytes.Repeat([]byte("x"), DefaultTailSize+100)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadTail(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != DefaultTailSize {
		t.Errorf("read %d bytes, want %d", len(got), DefaultTailSize)
	}
}

func TestReadTailRefuses(t *testing.T) {
	dir := t.TempDir()
	for name, path := range map[string]string{
		"a directory":    dir,
		"a missing file": filepath.Join(dir, "missing"),
	} {
		t.Run(name, func(t *testing.T) {
			if b, err := ReadTail(path, 0); err == nil {
				t.Errorf("ReadTail(%s) = %q, want an error", path, b)
			}
		})
	}
}
