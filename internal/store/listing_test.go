package store_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/store"
)

// TestExistsWithoutListing: a snapshot answers Exists, ReadRegularFiles and
// Files before its listing is read (a look at the one name, the names
// alone) exactly as from the listing (as a big plan's snapshot does): a regular file exists, a link to one,
// a directory, a FIFO or a name with a slash does not.
func TestExistsWithoutListing(t *testing.T) {
	old := store.SetSmallPlan(0) // every plan reads only what it is asked for
	t.Cleanup(func() { store.SetSmallPlan(old) })
	oldPar := store.SetParallelRead(2) // and reads many files with two readers
	t.Cleanup(func() { store.SetParallelRead(oldPar) })
	f, root := repo(t, map[string]string{
		"plan.md": "# Plan\n", "tasks.md": tasks3, "task-1.md": "one\n", "task-2-review-1.md": "r\n",
		"/elsewhere/task.md": "outside\n", "sub/task-9.md": "nested\n",
	})
	pd := filepath.Join(root, ".taskie", "plans", id)
	if err := os.Symlink("task-1.md", filepath.Join(pd, "task-2.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(pd, "task-3.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(pd, "task-4.md"), 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	names := []string{"plan.md", "tasks.md", "task-1.md", "task-2.md", "task-3.md", "task-4.md", "task-5.md",
		"task-2-review-1.md", "sub/task-9.md", "../p/task-1.md", "", ".", ".."}
	type answer struct {
		Exists bool
		Data   string
		Err    bool
	}
	ask := func(s *store.Snapshot) map[string]answer {
		out := map[string]answer{}
		for _, n := range names {
			out[n] = answer{Exists: s.Exists(n)}
		}
		s.ReadRegularFiles(names, func(n string, data []byte, err error) {
			a := out[n]
			a.Data, a.Err = string(data), err != nil
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("ReadRegularFiles(%q): %v, want fs.ErrNotExist", n, err)
			}
			out[n] = a
		})
		return out
	}
	fresh, err := f.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	files := fresh.Files() // from the names alone, before any listing
	unlisted := ask(fresh)
	listed, err := f.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	listed.Entries()
	if diff := cmp.Diff(ask(listed), unlisted); diff != "" {
		t.Errorf("before the listing (+) vs from it (-):\n%s", diff)
	}
	if !unlisted["task-1.md"].Exists || unlisted["task-1.md"].Data != "one\n" || unlisted["task-2.md"].Exists || unlisted["task-3.md"].Exists || unlisted["task-4.md"].Exists {
		t.Errorf("answers %v: want only the regular task-1.md", unlisted)
	}
	key := func(fn plan.FileName) string {
		return fn.Base + "/" + fn.Kind.String() + "/" + string(rune('0'+fn.Task)) + "/" + string(rune('0'+fn.N))
	}
	var got, want []string
	for _, fn := range files {
		got = append(got, key(fn))
	}
	for _, fn := range listed.Files() {
		want = append(want, key(fn))
	}
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Files from the names alone (+) vs from the listing (-):\n%s", diff)
	}
}

// TestReviewFilesOfSeries: the review files of a few series, read from
// the names with those prefixes alone, are the ones Files holds for them:
// legacy names included, a task's other files and other series left out.
func TestReviewFilesOfSeries(t *testing.T) {
	old := store.SetSmallPlan(0)
	t.Cleanup(func() { store.SetSmallPlan(old) })
	files := map[string]string{"plan.md": "p\n", "tasks.md": tasks3}
	for _, n := range []string{"plan-review-1.md", "plan-post-review-1.md", "plan-review-2.md", "tasks-review-1.md",
		"task-1-review-1.md", "task-1-post-review-1.md", "task-1-code-review-2.md", "task-1-output.md", "task-1-cto-1.md",
		"task-12-review-1.md", "task-2-review-3.md", "all-code-review-1.md", "design-review-1.md", "task-1.md"} {
		files[n] = "x\n"
	}
	f, _ := repo(t, files)
	for _, series := range [][]store.Series{
		{{Review: "code-review", Task: 1}},
		{{Review: "plan-review", Task: 1}, {Review: "post-plan-review"}, {Review: "next-task"}},
		{{Review: "tasks-review"}, {Review: "all-code-review"}, {Review: "code-review", Task: 12}},
		{{Review: "design-review"}, {Review: "code-review", Task: 3}},
		nil,
	} {
		names := func(fns []plan.FileName) []string {
			var out []string
			for _, fn := range fns {
				out = append(out, fmt.Sprintf("%s/%v/%d/%d/%v", fn.Base, fn.Kind, fn.Task, fn.N, fn.Legacy))
			}
			slices.Sort(out)
			return out
		}
		fresh, err := f.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		got := names(fresh.ReviewFiles(series))
		var want []plan.FileName
		for _, fn := range fresh.Files() {
			for _, sr := range series {
				if (fn.Kind == plan.KindReview || fn.Kind == plan.KindPostReview) && fn.Base == store.BaseOf(sr.Review) &&
					(sr.Review == "code-review" && fn.Task == int(sr.Task) || sr.Review != "code-review" && fn.Task == 0) && domain.IsReview(sr.Review) {
					want = append(want, fn)
					break
				}
			}
		}
		if diff := cmp.Diff(names(want), got); diff != "" {
			t.Errorf("ReviewFiles(%v) (+) vs Files (-):\n%s", series, diff)
		}
	}
}

// TestReadFilesInOrder: many files, read with two readers, come back in
// the order asked, each with its own content, a missing one as
// fs.ErrNotExist.
func TestReadFilesInOrder(t *testing.T) {
	files := map[string]string{"tasks.md": tasks3}
	var names, want []string
	for i := 1; i <= 150; i++ {
		n := plan.TaskFile(i)
		names = append(names, n)
		if i%7 == 0 {
			want = append(want, n+": missing")
			continue
		}
		files[n] = fmt.Sprintf("task %d\n", i)
		want = append(want, n+": "+files[n])
	}
	f, _ := repo(t, files)
	s, err := f.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	for _, read := range []func([]string, func(string, []byte, error)){s.ReadFiles, s.ReadRegularFiles} {
		var got []string
		read(names, func(n string, data []byte, err error) {
			switch {
			case errors.Is(err, fs.ErrNotExist):
				got = append(got, n+": missing")
			case err != nil:
				t.Errorf("%s: %v", n, err)
			default:
				got = append(got, n+": "+string(data))
			}
		})
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("read (-want +got):\n%s", diff)
		}
	}
}
