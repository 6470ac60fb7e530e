package reviewrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/internal/clock"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/store"
)

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func openPlan(t *testing.T, root, id string) *store.Plan {
	t.Helper()
	r, err := plan.Find(root)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := store.Open(r, clock.Real())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Close() })
	p, err := implied.With(fs, id)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// SetAside moves a file that is no review of this cycle into the log
// directory, headed by why, so no later stop or `taskie continue` adopts it.
func TestSetAsideMovesTheFileToTheLogs(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		".taskie/plans/p/plan.md":          "# p\n",
		".taskie/plans/p/plan-review-1.md": "orphan review\n",
	})
	r := &Runner{Plan: openPlan(t, root, "p"), Now: time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)}
	job := Job{Kind: domain.PlanReview, Iteration: 1}
	got := r.SetAside(job, "left by a reviewer whose hook was killed")
	if want := filepath.Join(".taskie", "logs", "p-plan-review-1-20261126T100000Z.log"); got != want {
		t.Errorf("SetAside = %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(root, ".taskie/plans/p/plan-review-1.md")); !os.IsNotExist(err) {
		t.Errorf("the review file is still in the plan: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(root, got))
	if err != nil {
		t.Fatal(err)
	}
	if want := "--- plan-review-1.md: left by a reviewer whose hook was killed ---\norphan review\n"; string(data) != want {
		t.Errorf("kept log = %q, want %q", data, want)
	}
	// A second orphan of the same review in the same second gets its own log.
	writeFiles(t, root, map[string]string{".taskie/plans/p/plan-review-1.md": "second\n"})
	if again := r.SetAside(job, "again"); again == got || !strings.HasSuffix(again, "-1.log") {
		t.Errorf("second SetAside = %q, want a new log next to %q", again, got)
	}
	if got := r.SetAside(job, "nothing there"); got != "(nothing to keep)" {
		t.Errorf("SetAside of a missing file = %q", got)
	}
}
