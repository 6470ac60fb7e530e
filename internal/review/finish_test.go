package review

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskie-dev/taskie/internal/domain"
)

// TestFinish covers every combination of review file and review text: a
// review blank in both is a failure, a blank file is replaced by the text,
// and a file with content is never touched.
func TestFinish(t *testing.T) {
	const missing = "\x00missing"
	tests := []struct {
		name     string
		file     string // content before finish; missing = no file
		text     string
		kind     string // failure kind; "" = success
		wantFile string // content after finish
		wrote    bool
	}{
		{name: "no file, text", file: missing, text: "review", wantFile: "review\n", wrote: true},
		{name: "no file, text with newline", file: missing, text: "review\n", wantFile: "review\n", wrote: true},
		{name: "no file, no text", file: missing, text: "", kind: FailNoReview},
		{name: "no file, blank text", file: missing, text: " \n\t", kind: FailNoReview},
		{name: "empty file, text", file: "", text: "review", wantFile: "review\n", wrote: true},
		{name: "blank file, text", file: "\n \t\n", text: "review", wantFile: "review\n", wrote: true},
		{name: "empty file, no text", file: "", text: "", kind: FailEmpty, wantFile: ""},
		{name: "blank file, blank text", file: " \n", text: "\n\n", kind: FailEmpty, wantFile: " \n"},
		{name: "file, no text", file: "# review\n", text: "", wantFile: "# review\n"},
		{name: "file, blank text", file: "# review\n", text: "  ", wantFile: "# review\n"},
		{name: "file, other text", file: "# review\n", text: "other", wantFile: "# review\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			req := Request{Root: dir, ReviewFile: filepath.Join(dir, "task-1-review-1.md")}
			if tc.file != missing {
				writeFile(t, req.ReviewFile, tc.file)
			}
			in := Result{Verdict: domain.Pass, Text: tc.text, Raw: []byte("raw output")}
			res, err := finish(req, in)
			if tc.kind != "" {
				f := wantFailure(t, res, err, tc.kind, "the reviewer returned an empty review")
				if string(f.Raw) != "raw output" {
					t.Errorf("Failure.Raw = %q, want the reviewer's output", f.Raw)
				}
			} else if err != nil {
				t.Fatalf("finish: %v", err)
			}
			if res.WroteFile != tc.wrote {
				t.Errorf("WroteFile = %v, want %v", res.WroteFile, tc.wrote)
			}
			if tc.file == missing && tc.kind != "" {
				if _, err := os.Stat(req.ReviewFile); err == nil {
					t.Error("a review file exists after an empty review")
				}
			} else if got := readFile(t, req.ReviewFile); got != tc.wantFile {
				t.Errorf("review file = %q, want %q", got, tc.wantFile)
			}
			if leftovers, _ := filepath.Glob(filepath.Join(dir, ".*")); len(leftovers) > 0 {
				t.Errorf("temporary files left behind: %q", leftovers)
			}
		})
	}
}

// TestFinishKeepsNonRegularFile keeps the rule that anything but a regular
// file at the review path counts as the reviewer's (a FIFO is never read).
func TestFinishKeepsNonRegularFile(t *testing.T) {
	dir := t.TempDir()
	req := Request{Root: dir, ReviewFile: filepath.Join(dir, "task-1-review-1.md")}
	if err := os.Mkdir(req.ReviewFile, 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := finish(req, Result{Verdict: domain.Pass, Text: "review"})
	if err != nil || res.WroteFile {
		t.Errorf("finish = WroteFile %v, err %v; want false, nil", res.WroteFile, err)
	}
}

// TestReviewBlankReviews runs the blank cases through both adapters and
// the fake reviewer.
func TestReviewBlankReviews(t *testing.T) {
	tests := []struct {
		step     string
		kind     string // "" = success
		wantFile string // substring of the review file afterwards
		wrote    bool
	}{
		{step: "BLANK", kind: FailEmpty},
		{step: "PASS-BLANKFILE", wantFile: "step PASS-BLANKFILE", wrote: true},
		{step: "PASS-NOTEXT", wantFile: "step PASS", wrote: false},
	}
	for _, name := range adapterNames {
		for _, tc := range tests {
			t.Run(name+"/"+tc.step, func(t *testing.T) {
				f := newFixture(t, tc.step)
				req := f.request(1)
				res, err := mustNew(t, name).Review(context.Background(), req)
				if tc.kind != "" {
					wantFailure(t, res, err, tc.kind, "the reviewer returned an empty review")
					if body := readFile(t, req.ReviewFile); strings.TrimSpace(body) != "" {
						t.Errorf("review file = %q, want it left blank", body)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if res.Verdict != domain.Pass || res.WroteFile != tc.wrote {
					t.Errorf("verdict %q, WroteFile %v; want PASS, %v", res.Verdict, res.WroteFile, tc.wrote)
				}
				if body := readFile(t, req.ReviewFile); !strings.Contains(body, tc.wantFile) {
					t.Errorf("review file = %q, want it to contain %q", body, tc.wantFile)
				}
			})
		}
	}
}

// TestFinishNeverWritesOutside: taskie writes the review text itself through
// the safe file layer, so a plan directory that links out of the project
// gets nothing written through it.
func TestFinishNeverWritesOutside(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".taskie", "plans"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, ".taskie", "plans", "p")); err != nil {
		t.Fatal(err)
	}
	req := Request{Root: dir, ReviewFile: filepath.Join(dir, ".taskie", "plans", "p", "plan-review-1.md")}
	if _, err := finish(req, Result{Verdict: domain.Pass, Text: "review"}); err == nil {
		t.Error("finish wrote the review through a link out of the project")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("files written outside the project: %v", entries)
	}
}
