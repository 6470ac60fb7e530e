package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskie-dev/taskie/internal/clock"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/plan"
)

// The mirror reads the settings and connects on the first events only:
// with the file store it does nothing; a store that cannot be reached is
// one warning naming the URL without its password, and no retry.
func TestSharedMirror(t *testing.T) {
	t.Setenv(DatabaseURLEnv, "")
	opens := 0
	RegisterCoordination("mirrortest", func(ctx context.Context, url string) (Coordination, error) {
		opens++
		return nil, errors.New(RedactURL(url) + ": cannot connect")
	})
	for _, tc := range []struct {
		name, store     string
		wantOpens, warn int
	}{
		{"files", "", 0, 0},
		{"unreachable", "mirrortest://u:s3cret@db/x", 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opens = 0
			read := 0
			var warns []string
			m := &SharedMirror{Root: t.TempDir(), Settings: func() CoordSettings {
				read++
				return CoordSettings{Store: tc.store, Project: "example.com/a"}
			}, Warn: func(s string) { warns = append(warns, s) }}
			m.Events("p", nil) // nothing appended: nothing read
			if read != 0 {
				t.Fatalf("settings read %d times for no events", read)
			}
			m.Events("p", []events.Event{{Event: events.FieldSet}})
			m.Events("p", []events.Event{{Event: events.FieldSet}})
			if read != 1 || opens != tc.wantOpens || len(warns) != tc.warn {
				t.Errorf("settings read %d, opened %d, warnings %q", read, opens, warns)
			}
			for _, w := range warns {
				if strings.Contains(w, "s3cret") || !strings.Contains(w, "taskie store import p") {
					t.Errorf("warning %q", w)
				}
			}
			m.Close()
		})
	}
}

// A file store gets its mirror from SetMirror, and hands it every event it
// appends to a plan's log, after the log.
func TestFilesMirror(t *testing.T) {
	got := map[string]int{}
	SetMirror(func(*plan.Repo) Mirror { return recorder(got) })
	defer SetMirror(nil)
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".taskie", "plans", "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := plan.Find(root)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Open(r, clock.Real())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Append("p", events.Event{Event: events.Progress}, events.Event{Event: events.Progress}); err != nil {
		t.Fatal(err)
	}
	if got["p"] != 2 {
		t.Errorf("mirrored %v; want 2 events of p", got)
	}
}

type recorder map[string]int

func (r recorder) Events(plan string, evs []events.Event) { r[plan] += len(evs) }
func (r recorder) Close() error                           { return nil }
