package plan

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// FileKind classifies a plan directory .md file (docs/validation.md).
type FileKind int

// KindUnknown is the zero value so that an unset FileName never passes
// for a real file.
const (
	KindUnknown FileKind = iota
	KindPlan
	KindDesign
	KindTasks
	KindTask
	KindReview
	KindPostReview
	// KindOutput is task-T-output.md, the output a finished task leaves
	// (`taskie task result`).
	KindOutput
	// KindCTO is task-T-cto-N.md, the guidance of the task's CTO attempt N
	// (docs/lifecycle.md, "The CTO").
	KindCTO
)

// String names the value in test failures (%v); taskie prints none.
func (k FileKind) String() string {
	switch k {
	case KindPlan:
		return "plan"
	case KindDesign:
		return "design"
	case KindTasks:
		return "tasks"
	case KindTask:
		return "task"
	case KindReview:
		return "review"
	case KindPostReview:
		return "post-review"
	case KindOutput:
		return "output"
	case KindCTO:
		return "cto"
	}
	return "unknown"
}

// FileName is a parsed plan file name.
type FileName struct {
	Kind   FileKind
	Base   string // "plan", "design", "tasks", "task", "all-code"; "" if unknown
	Task   int    // T of task-T*.md, else 0
	N      int    // review iteration, else 0
	Legacy bool   // task-T-code-(post-)review-N.md from the older plugin
}

// reviewBases are the bases that have review series without a task number.
var reviewBases = []string{"plan", "design", "tasks", "all-code"}

// reviewPrefixes are reviewBases with their dash: ParseFileName runs once
// per file of a plan directory (tens of thousands in a big plan), so it
// builds no string.
var reviewPrefixes = []string{"plan-", "design-", "tasks-", "all-code-"}

// ParseFileName classifies a .md file name per docs/validation.md, including the older
// plugin's task-T-code-review-N.md names. Numbers must be positive and
// written without leading zeros so each file has one name.
func ParseFileName(name string) FileName {
	stem, ok := strings.CutSuffix(name, ".md")
	if !ok {
		return FileName{}
	}
	switch stem {
	case "plan":
		return FileName{Kind: KindPlan, Base: "plan"}
	case "design":
		return FileName{Kind: KindDesign, Base: "design"}
	case "tasks":
		return FileName{Kind: KindTasks, Base: "tasks"}
	}
	for i, p := range reviewPrefixes {
		if rest, ok := strings.CutPrefix(stem, p); ok {
			return parseReview(rest, FileName{Base: reviewBases[i]})
		}
	}
	rest, ok := strings.CutPrefix(stem, "task-")
	if !ok {
		return FileName{}
	}
	num, rest, more := strings.Cut(rest, "-")
	t, ok := canonicalInt(num)
	if !ok {
		return FileName{}
	}
	if !more {
		return FileName{Kind: KindTask, Base: "task", Task: t}
	}
	if rest == "output" {
		return FileName{Kind: KindOutput, Base: "task", Task: t}
	}
	if num, ok := strings.CutPrefix(rest, "cto-"); ok {
		n, ok := canonicalInt(num)
		if !ok {
			return FileName{}
		}
		return FileName{Kind: KindCTO, Base: "task", Task: t, N: n}
	}
	fn := FileName{Base: "task", Task: t}
	if r, ok := strings.CutPrefix(rest, "code-"); ok {
		fn.Legacy = true
		rest = r
	}
	return parseReview(rest, fn)
}

// parseReview reads "review-N" or "post-review-N" into fn.
func parseReview(s string, fn FileName) FileName {
	kind := KindReview
	if r, ok := strings.CutPrefix(s, "post-"); ok {
		kind, s = KindPostReview, r
	}
	num, ok := strings.CutPrefix(s, "review-")
	if !ok {
		return FileName{}
	}
	n, ok := canonicalInt(num)
	if !ok {
		return FileName{}
	}
	fn.Kind, fn.N = kind, n
	return fn
}

// canonicalInt accepts a positive integer without leading zeros.
func canonicalInt(s string) (int, bool) {
	if s == "" || s[0] == '0' {
		return 0, false
	}
	return positiveInt(s)
}

// reviewBase maps a review phase name to a file base; "" when unknown.
func reviewBase(review string) string {
	review = strings.TrimPrefix(review, "post-")
	switch review {
	case "plan-review", "design-review", "tasks-review", "all-code-review":
		return strings.TrimSuffix(review, "-review")
	case "code-review":
		return "task"
	}
	return ""
}

// ReviewFile names the review file for a review phase ("plan-review",
// "design-review", "tasks-review", "code-review", "all-code-review"; a
// "post-" prefix is ignored). task is used only by code-review. It returns
// "" for an unknown review.
func ReviewFile(review string, task, n int) string {
	return reviewName(review, task, n, "review")
}

// PostReviewFile names the post-review file; see ReviewFile.
func PostReviewFile(review string, task, n int) string {
	return reviewName(review, task, n, "post-review")
}

func reviewName(review string, task, n int, suffix string) string {
	base := reviewBase(review)
	switch base {
	case "":
		return ""
	case "task":
		base = "task-" + strconv.Itoa(task)
	}
	return base + "-" + suffix + "-" + strconv.Itoa(n) + ".md"
}

// legacyName is the older plugin's name for a code review file.
func legacyName(review string, task, n int, suffix string) string {
	if reviewBase(review) != "task" {
		return ""
	}
	return "task-" + strconv.Itoa(task) + "-code-" + suffix + "-" + strconv.Itoa(n) + ".md"
}

// PostReviewFileExists reports whether the post-review file exists in dir
// under its current or legacy name.
func PostReviewFileExists(dir, review string, task, n int) bool {
	return fileExists(dir, PostReviewFile(review, task, n)) ||
		fileExists(dir, legacyName(review, task, n, "post-review"))
}

func fileExists(dir, name string) bool {
	if name == "" {
		return false
	}
	fi, err := os.Stat(filepath.Join(dir, name))
	return err == nil && !fi.IsDir()
}

// TaskFile names the file of task T.
func TaskFile(task int) string { return "task-" + strconv.Itoa(task) + ".md" }

// TaskOutputFile names the output file task T leaves when it completes.
func TaskOutputFile(task int) string { return "task-" + strconv.Itoa(task) + "-output.md" }

// CTOFile names the guidance file of CTO attempt n on task T.
func CTOFile(task, n int) string {
	return "task-" + strconv.Itoa(task) + "-cto-" + strconv.Itoa(n) + ".md"
}
