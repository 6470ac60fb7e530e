package install

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeFile writes a test's fixture as the user's own file.
func writeFile(p string, data []byte) error { return writeFileIn("", p, data, filePerm) }

// mustWrite writes a fixture with os.WriteFile, making its directory.
func mustWrite(t *testing.T, p, data string, perm fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, perm); err != nil {
		t.Fatal(err)
	}
}

// temps lists what looks like a temp file left in dir.
func temps(t *testing.T, dir string) []string {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if strings.Contains(e.Name(), "tmp") && !strings.HasSuffix(e.Name(), ".taskie-tmp") { // not the planted links
			out = append(out, e.Name())
		}
	}
	return out
}

// A link planted at the old fixed temp name next to one of the user's
// files (settings.json.taskie-tmp, hooks.json.taskie-tmp,
// config.toml.taskie-tmp) is never written through: each write goes to a
// new temp file with a random name, created exclusively.
func TestUserFilesTempNameIsNotFixed(t *testing.T) {
	tg := codexTarget(t)
	other := filepath.Join(tg.Home, "other")
	mustWrite(t, other, "the user's own\n", 0o644)
	settings, _ := tg.ClaudeSettings()
	hooks, _ := tg.CodexHooks()
	for _, f := range []string{settings, hooks, tg.CodexConfig()} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(other, f+".taskie-tmp"); err != nil {
			t.Skip(err)
		}
	}
	if _, err := Claude(tg, assets); err != nil {
		t.Fatal(err)
	}
	if _, err := Codex(tg, assets, CodexOptions{}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(other); string(data) != "the user's own\n" {
		t.Errorf("written through a planted link: %q", data)
	}
	for _, f := range []string{settings, hooks, tg.CodexConfig()} {
		if fi, err := os.Lstat(f); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s: want a regular file, got %v %v", f, fi, err)
		}
		if got := temps(t, filepath.Dir(f)); len(got) != 0 {
			t.Errorf("%s: temp files %v", filepath.Dir(f), got)
		}
	}
}

// The user's files keep their permission bits across a rewrite, a new one
// gets the umask's, and a file the user keeps elsewhere through a link (a
// dotfiles manager's) is written there, the link kept.
func TestUserFilesModesAndLinks(t *testing.T) {
	tg := codexTarget(t)
	settings, _ := tg.ClaudeSettings()
	dotfile := filepath.Join(tg.Home, "dotfiles", "claude-settings.json")
	mustWrite(t, dotfile, `{"model": "opus"}`, 0o640)
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dotfile, settings); err != nil {
		t.Skip(err)
	}
	mustWrite(t, tg.CodexConfig(), "model = \"o3\"\n", 0o604)
	if _, err := Claude(tg, assets); err != nil {
		t.Fatal(err)
	}
	if _, err := Codex(tg, assets, CodexOptions{}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(settings); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("%s: the link was replaced: %v %v", settings, fi, err)
	}
	if data, _ := os.ReadFile(dotfile); !strings.Contains(string(data), PluginID) || !strings.Contains(string(data), "opus") {
		t.Errorf("%s: %s", dotfile, data)
	}
	hooks, _ := tg.CodexHooks()
	got := map[string]fs.FileMode{}
	for _, f := range []string{dotfile, tg.CodexConfig(), hooks} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		got[filepath.Base(f)] = fi.Mode().Perm()
	}
	want := map[string]fs.FileMode{"claude-settings.json": 0o640, "config.toml": 0o604, "hooks.json": 0o644 &^ umask(t)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("modes (-want +got):\n%s", diff)
	}
}

// A FIFO or a huge file in place of one of the user's files is an error
// naming it, at once.
func TestUserFilesNotRegular(t *testing.T) {
	tg := codexTarget(t)
	for _, tc := range []struct {
		name, want string
		plant      func(p string) error
		run        func() error
	}{
		{"fifo config.toml", "not a regular file (a FIFO)", mkfifo, func() error { _, err := Codex(tg, assets, CodexOptions{}); return err }},
		{"huge config.toml", "file too large", huge, func() error { _, err := Codex(tg, assets, CodexOptions{}); return err }},
		{"huge config.toml, uninstall", "file too large", huge, func() error { _, err := UninstallCodex(tg, assets); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tg.CodexConfig()
			_ = os.RemoveAll(tg.CodexHome)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := tc.plant(p); err != nil {
				t.Skip(err)
			}
			err := tc.run()
			if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q naming %s", err, tc.want, p)
			}
		})
	}
}

func huge(p string) error {
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Truncate(200 << 20) // sparse: costs no disk
}

func statPerm(p string) (fs.FileMode, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return 0, err
	}
	return fi.Mode().Perm(), nil
}
