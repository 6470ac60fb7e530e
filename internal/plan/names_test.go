package plan

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseFileName(t *testing.T) {
	tests := []struct {
		name string
		want FileName
	}{
		{"plan.md", FileName{Kind: KindPlan, Base: "plan"}},
		{"design.md", FileName{Kind: KindDesign, Base: "design"}},
		{"tasks.md", FileName{Kind: KindTasks, Base: "tasks"}},
		{"task-3.md", FileName{Kind: KindTask, Base: "task", Task: 3}},
		{"task-120.md", FileName{Kind: KindTask, Base: "task", Task: 120}},
		{"plan-review-1.md", FileName{Kind: KindReview, Base: "plan", N: 1}},
		{"plan-post-review-2.md", FileName{Kind: KindPostReview, Base: "plan", N: 2}},
		{"design-review-3.md", FileName{Kind: KindReview, Base: "design", N: 3}},
		{"design-post-review-3.md", FileName{Kind: KindPostReview, Base: "design", N: 3}},
		{"tasks-review-10.md", FileName{Kind: KindReview, Base: "tasks", N: 10}},
		{"tasks-post-review-1.md", FileName{Kind: KindPostReview, Base: "tasks", N: 1}},
		{"task-3-review-2.md", FileName{Kind: KindReview, Base: "task", Task: 3, N: 2}},
		{"task-3-post-review-2.md", FileName{Kind: KindPostReview, Base: "task", Task: 3, N: 2}},
		{"all-code-review-1.md", FileName{Kind: KindReview, Base: "all-code", N: 1}},
		{"all-code-post-review-4.md", FileName{Kind: KindPostReview, Base: "all-code", N: 4}},
		{"task-7-code-review-1.md", FileName{Kind: KindReview, Base: "task", Task: 7, N: 1, Legacy: true}},
		{"task-7-code-post-review-1.md", FileName{Kind: KindPostReview, Base: "task", Task: 7, N: 1, Legacy: true}},
		{"task-3-output.md", FileName{Kind: KindOutput, Base: "task", Task: 3}},
		// Not plan files.
		{"task-3-outputs.md", FileName{}},
		{"task-03-output.md", FileName{}},
		{"output.md", FileName{}},
		{"plan-review.md", FileName{}},
		{"task-x.md", FileName{}},
		{"notes.md", FileName{}},
		{"task-0.md", FileName{}},
		{"task-03.md", FileName{}},
		{"task-3-.md", FileName{}},
		{"task-3-review-0.md", FileName{}},
		{"task-3-review-x.md", FileName{}},
		{"task-3-code-1.md", FileName{}},
		{"task--3.md", FileName{}},
		{"plan", FileName{}},
		{"plan.txt", FileName{}},
		{"Plan.md", FileName{}},
		{"code-review-1.md", FileName{}},
		{"plan-review-1.md.bak", FileName{}},
		{"all-code-review.md", FileName{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, ParseFileName(tc.name)); d != "" {
				t.Errorf("ParseFileName (-want +got):\n%s", d)
			}
		})
	}
}

func TestReviewFileNames(t *testing.T) {
	tests := []struct {
		review   string
		task, n  int
		review_  string
		postName string
	}{
		{"plan-review", 0, 1, "plan-review-1.md", "plan-post-review-1.md"},
		{"tasks-review", 0, 2, "tasks-review-2.md", "tasks-post-review-2.md"},
		{"design-review", 0, 3, "design-review-3.md", "design-post-review-3.md"},
		{"code-review", 4, 2, "task-4-review-2.md", "task-4-post-review-2.md"},
		{"all-code-review", 0, 5, "all-code-review-5.md", "all-code-post-review-5.md"},
		{"post-code-review", 4, 1, "task-4-review-1.md", "task-4-post-review-1.md"},
		{"bogus", 1, 1, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.review, func(t *testing.T) {
			if got := ReviewFile(tc.review, tc.task, tc.n); got != tc.review_ {
				t.Errorf("ReviewFile = %q, want %q", got, tc.review_)
			}
			if got := PostReviewFile(tc.review, tc.task, tc.n); got != tc.postName {
				t.Errorf("PostReviewFile = %q, want %q", got, tc.postName)
			}
			// Every name built must parse back to a review file.
			if tc.review_ != "" && ParseFileName(tc.review_).Kind != KindReview {
				t.Errorf("%s does not parse as a review", tc.review_)
			}
			if tc.postName != "" && ParseFileName(tc.postName).Kind != KindPostReview {
				t.Errorf("%s does not parse as a post-review", tc.postName)
			}
		})
	}
	if got := TaskFile(3); got != "task-3.md" {
		t.Errorf("TaskFile(3) = %q", got)
	}
}

func TestPostReviewFileExists(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"task-2-code-post-review-1.md", "task-2-post-review-2.md", "plan-post-review-2.md", "task-2-code-review-3.md"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "plan-post-review-1.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		got    bool
		wanted bool
	}{
		{"legacy post-review", PostReviewFileExists(dir, "code-review", 2, 1), true},
		{"current post-review", PostReviewFileExists(dir, "code-review", 2, 2), true},
		{"a review is not a post-review", PostReviewFileExists(dir, "code-review", 2, 3), false},
		{"other task", PostReviewFileExists(dir, "code-review", 3, 1), false},
		{"plan post-review", PostReviewFileExists(dir, "plan-review", 0, 2), true},
		{"legacy form is only for code reviews", PostReviewFileExists(dir, "tasks-review", 2, 1), false},
		{"a directory is not a file", PostReviewFileExists(dir, "plan-review", 0, 1), false},
		{"unknown review", PostReviewFileExists(dir, "bogus", 2, 1), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.wanted {
				t.Errorf("got %v, want %v", tc.got, tc.wanted)
			}
		})
	}
}
