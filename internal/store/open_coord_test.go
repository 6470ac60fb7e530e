package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskie-dev/taskie/internal/store"
)

func TestNormalizeRemote(t *testing.T) {
	tests := []struct{ remote, want string }{
		{"https://github.com/Org/Repo.git", "github.com/Org/Repo"},
		{"https://user:pw@GitHub.com/Org/Repo.git/", "github.com/Org/Repo"},
		{"git@github.com:Org/Repo.git", "github.com/Org/Repo"},
		{"ssh://git@GITHUB.com:22/Org/Repo", "github.com/Org/Repo"},
		{"git://github.com/Org/Repo", "github.com/Org/Repo"},
		{"github.com:Org/Repo", "github.com/Org/Repo"},
		{"https://gitlab.example.com/group/sub/project.git", "gitlab.example.com/group/sub/project"},
		{"/srv/git/app.git", "/srv/git/app"},
		{"file:///srv/git/app.git", "/srv/git/app"},
		{"  https://example.com/a//b/../c.git \n", "example.com/a/c"},
		{"", ""},
	}
	for _, tc := range tests {
		if got := store.NormalizeRemote(tc.remote); got != tc.want {
			t.Errorf("NormalizeRemote(%q) = %q, want %q", tc.remote, got, tc.want)
		}
	}
}

func TestRedactURL(t *testing.T) {
	tests := []struct{ url, want string }{
		{"postgres://u:secret@db.example.com:5432/taskie?sslmode=require", "postgres://u:xxxxx@db.example.com:5432/taskie?sslmode=require"},
		{"postgres://u@db/taskie", "postgres://u@db/taskie"},
		{"postgres://db/taskie?user=u&password=secret", "postgres://db/taskie?password=xxxxx&user=u"},
		{"postgres://u:sec%2Fret@db/t?sslpassword=x", "postgres://u:xxxxx@db/t?sslpassword=xxxxx"},
		{"postgres://u:pw@h:bad port/db", "postgres://… (a URL that does not parse)"},
		{"u:secret@host", "(a URL that does not parse)"},
	}
	for _, tc := range tests {
		got := store.RedactURL(tc.url)
		if got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.url, got, tc.want)
		}
		if strings.Contains(got, "secret") {
			t.Errorf("RedactURL(%q) shows the password", tc.url)
		}
	}
}

func TestCoordSettingsURL(t *testing.T) {
	s := store.CoordSettings{Store: "postgres://config/db"}
	t.Setenv(store.DatabaseURLEnv, "")
	if u, src := s.URL(); u != "postgres://config/db" || src != "store" {
		t.Errorf("URL() = %q, %q", u, src)
	}
	t.Setenv(store.DatabaseURLEnv, " postgres://env/db ")
	if u, src := s.URL(); u != "postgres://env/db" || src != store.DatabaseURLEnv {
		t.Errorf("URL() with the variable = %q, %q", u, src)
	}
}

func TestOpenCoordination(t *testing.T) {
	ctx := context.Background()
	t.Setenv(store.DatabaseURLEnv, "")
	root := t.TempDir()
	c, project, err := store.OpenCoordination(ctx, root, store.CoordSettings{})
	if err != nil || project != "" {
		t.Fatalf("files: %v, %q, %v", c, project, err)
	}
	if _, ok := c.(*store.FileCoord); !ok {
		t.Errorf("the default store is %T, want files", c)
	}
	c.Close()
	for _, tc := range []struct{ url, want string }{
		{"mysql://u:secret@h/db", `no coordination store for "mysql" URLs`},
		{"db.example.com", "not a database URL like postgres://user@host/db"},
	} {
		_, _, err := store.OpenCoordination(ctx, root, store.CoordSettings{Store: tc.url})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "secret") {
			t.Errorf("store %q: %v", tc.url, err)
		}
	}
}

func TestProjectID(t *testing.T) {
	if got, err := store.ProjectID(t.TempDir(), " example.com/x "); err != nil || got != "example.com/x" {
		t.Errorf("configured project: %q, %v", got, err)
	}
	root := gitRepo(t)
	if _, err := store.ProjectID(root, ""); err == nil || !strings.Contains(err.Error(), "no origin remote") {
		t.Errorf("no origin: %v", err)
	}
	git(t, root, "remote", "add", "origin", "git@Example.com:team/app.git")
	sub := filepath.Join(root, "sub")
	os.Mkdir(sub, 0o755)
	if got, err := store.ProjectID(sub, ""); err != nil || got != "example.com/team/app" {
		t.Errorf("from the origin: %q, %v", got, err)
	}
}
