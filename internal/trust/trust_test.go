package trust

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPath(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	for _, tc := range []struct{ xdg, want string }{
		{"/state", "/state/taskie/trust.json"},
		{"", "/home/u/.local/state/taskie/trust.json"},
		{"rel", "/home/u/.local/state/taskie/trust.json"},
	} {
		t.Setenv("XDG_STATE_HOME", tc.xdg)
		got, err := Path()
		if err != nil || got != tc.want {
			t.Errorf("XDG_STATE_HOME=%q: Path = %q, %v; want %q", tc.xdg, got, err, tc.want)
		}
	}
}

// newStore returns a store under a fresh XDG_STATE_HOME and a config file
// with content.
func newStore(t *testing.T, content string) (*Store, string) {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	s, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), ".taskie", "config.json")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return s, file
}

func TestTrust(t *testing.T) {
	const content = `{"reviewer_command": ["r"]}`
	tests := []struct {
		name  string
		steps func(t *testing.T, s *Store, file string)
		check string // content checked after the steps
		want  bool
	}{
		{"never trusted", func(*testing.T, *Store, string) {}, content, false},
		{"trusted", trustIt, content, true},
		{"changed after trust", trustIt, content + " ", false},
		{"changed back", trustIt, content, true},
		{"revoked", func(t *testing.T, s *Store, file string) {
			trustIt(t, s, file)
			if ok, err := s.Revoke(file); !ok || err != nil {
				t.Fatalf("Revoke = %v, %v; want true", ok, err)
			}
		}, content, false},
		{"trusted again after a change", func(t *testing.T, s *Store, file string) {
			trustIt(t, s, file)
			if err := os.WriteFile(file, []byte(content+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			trustIt(t, s, file)
		}, content + "\n", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, file := newStore(t, content)
			tc.steps(t, s, file)
			got, err := trusted(s, file, []byte(tc.check))
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Trusted = %v, want %v", got, tc.want)
			}
		})
	}
}

// trustIt trusts file's current content.
func trustIt(t *testing.T, s *Store, file string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.TrustPinned(file, data, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
}

func TestStoreFile(t *testing.T) {
	s, file := newStore(t, "{}")
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	e, err := s.TrustPinned(file, []byte("{}"), nil, now)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := Key(file)
	want := Entry{File: key, SHA256: "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a", Trusted: now}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("entry (-want +got):\n%s", diff)
	}
	st, err := os.Stat(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("store mode = %v, want 0600", st.Mode().Perm())
	}
	data, _ := os.ReadFile(s.Path())
	wantJSON := fmt.Sprintf("{\n  \"version\": 1,\n  \"files\": {\n    %q: {\n      \"sha256\": %q,\n      \"trusted_at\": \"2026-05-01T12:00:00Z\"\n    }\n  }\n}\n", key, want.SHA256)
	if string(data) != wantJSON {
		t.Errorf("store =\n%s\nwant\n%s", data, wantJSON)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(s.Path()), ".*tmp*"))
	if len(left) > 0 {
		t.Errorf("temp files left: %v", left)
	}
}

func TestRevokeUnknown(t *testing.T) {
	s, file := newStore(t, "{}")
	ok, err := s.Revoke(file)
	if ok || err != nil {
		t.Errorf("Revoke = %v, %v; want false, nil", ok, err)
	}
	if _, err := os.Stat(s.Path()); !os.IsNotExist(err) {
		t.Errorf("a revoke of nothing wrote the store: %v", err)
	}
}

// TestKeyResolvesDirectories: one file reached through a symlinked
// directory is one entry, and a missing file still has a key.
func TestKeyResolvesDirectories(t *testing.T) {
	s, file := newStore(t, "{}")
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(filepath.Dir(file), link); err != nil {
		t.Fatal(err)
	}
	trustIt(t, s, filepath.Join(link, "config.json"))
	if ok, err := trusted(s, file, []byte("{}")); !ok || err != nil {
		t.Errorf("Trusted through the real path = %v, %v", ok, err)
	}
	if k, err := Key(filepath.Join(link, "missing.json")); err != nil || !strings.HasSuffix(k, "/.taskie/missing.json") || strings.Contains(k, "link") {
		t.Errorf("Key of a missing file = %q, %v", k, err)
	}
}

func TestList(t *testing.T) {
	s, a := newStore(t, "a")
	b := filepath.Join(filepath.Dir(a), "other.json")
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, f := range []string{b, a} {
		if _, err := s.TrustPinned(f, []byte(f), nil, now); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	ka, _ := Key(a)
	kb, _ := Key(b)
	want := []Entry{{File: ka, SHA256: Hash([]byte(a)), Trusted: now}, {File: kb, SHA256: Hash([]byte(b)), Trusted: now}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
}

func TestBadStore(t *testing.T) {
	tests := []struct {
		name    string
		content string
		mode    os.FileMode
		want    string
	}{
		{"malformed", "{nope", 0o600, "malformed trust store"},
		{"writable by others", "{}", 0o666, "writable by other users"},
		{"writable by the group", "{}", 0o620, "writable by other users"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, file := newStore(t, "{}")
			if err := os.MkdirAll(filepath.Dir(s.Path()), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(s.Path(), []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(s.Path(), tc.mode); err != nil {
				t.Fatal(err)
			}
			ok, err := trusted(s, file, []byte("{}"))
			if ok || err == nil || !strings.HasPrefix(err.Error(), s.Path()+": ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Trusted = %v, %v; want an error naming %s: …%s", ok, err, s.Path(), tc.want)
			}
			if _, err := s.TrustPinned(file, []byte("{}"), nil, time.Now()); err == nil {
				t.Error("Trust overwrote a store it could not read")
			}
		})
	}
}

func TestStoreIsADirectory(t *testing.T) {
	s, file := newStore(t, "{}")
	if err := os.MkdirAll(s.Path(), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := trusted(s, file, []byte("{}")); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Trusted = %v", err)
	}
}

// TestConcurrentTrust: changes from several processes at once all survive
// (the read-modify-write is under the sidecar lock).
func TestConcurrentTrust(t *testing.T) {
	s, file := newStore(t, "{}")
	dir := filepath.Dir(file)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			// Separate Store values, as separate processes would have.
			if _, err := At(s.Path()).TrustPinned(filepath.Join(dir, fmt.Sprintf("c%02d.json", i)), []byte{byte(i)}, nil, time.Now()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 20 {
		t.Errorf("%d entries after 20 concurrent trusts, want 20", len(got))
	}
}

func TestNoHome(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "")
	if _, err := Open(); err == nil || !strings.Contains(err.Error(), "XDG_STATE_HOME") {
		t.Errorf("Open = %v, want an error naming XDG_STATE_HOME", err)
	}
}

// trusted reports whether the user trusts file with exactly the content
// data, as config's trust check decides from Get.
func trusted(s *Store, file string, data []byte) (bool, error) {
	e, ok, err := s.Get(file)
	if err != nil || !ok {
		return false, err
	}
	return e.SHA256 == Hash(data), nil
}
