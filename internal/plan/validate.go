package plan

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Severity says whether a violation blocks (error) or only informs.
type Severity string

// Severities; only rule 8 produces warnings.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Violation is one broken validation rule (docs/validation.md).
type Violation struct {
	Rule     int      `json:"rule"`
	File     string   `json:"file"`           // relative to the plan dir, slash-separated
	Line     int      `json:"line,omitempty"` // 1-based; 0 when not applicable
	Severity Severity `json:"severity"`
	Msg      string   `json:"message"`
}

// String renders "file:line: msg (rule N)", omitting the line when 0 and
// prefixing warnings so they read differently from errors.
func (v Violation) String() string {
	loc := v.File
	if v.Line > 0 {
		loc += ":" + strconv.Itoa(v.Line)
	}
	sev := ""
	if v.Severity == SeverityWarning {
		sev = "warning: "
	}
	return fmt.Sprintf("%s: %s%s (rule %d)", loc, sev, v.Msg, v.Rule)
}

// mdFile is a top-level .md file whose name parsed.
type mdFile struct {
	name string
	fn   FileName
}

// validator collects the violations of one Validate call.
type validator struct {
	in  Listing
	dir string
	out []Violation
	md  []mdFile // in directory order
	// The names of md a rule asks about: plan.md, design.md, tasks.md and
	// the task files, not a set of every name (a plan of 10,000 tasks holds
	// 60,000, mostly reviews no rule looks up).
	hasPlan, hasDesign, hasTasks bool
	taskFiles                    map[int]bool
	present                      map[string]bool // allowed non-.md files that exist
}

// Listing is what validation looks at: the plan directory's entries and
// the bytes of tasks.md and state.json, read once by the caller (the
// plan store's snapshot).
type Listing struct {
	Dir      string
	Entries  []ListEntry
	Tasks    []byte
	HasTasks bool
	// TaskProblems are tasks.md's parse problems when the caller parsed it
	// already (TasksParsed): it is not parsed twice.
	TaskProblems []Problem
	TasksParsed  bool
	// Table is tasks.md parsed, when TasksParsed; without it tasks.md is
	// parsed again for the dependency check.
	Table    *Tasks
	State    []byte
	HasState bool
}

// ListEntry is one name of the plan directory with its type bits.
type ListEntry struct {
	Name string
	Mode fs.FileMode
}

// ValidateListing checks every validation rule on a plan and returns all
// violations sorted by file, then line. tasks.md is parsed once so large
// plans stay fast (docs/performance.md). checkState gets state.json's bytes when it
// exists; each message becomes a rule-8 warning. A nil checkState skips
// rule 8.
func ValidateListing(in Listing, checkState func(data []byte) []string) []Violation {
	n := len(in.Entries)
	v := &validator{in: in, dir: in.Dir, taskFiles: map[int]bool{}, present: map[string]bool{}, md: make([]mdFile, 0, n)}
	v.scan(in.Entries)
	v.checkPlan()
	v.checkBases()
	v.checkSeries()
	v.checkTaskFiles()
	v.checkTable()
	v.checkState(checkState)
	sort.SliceStable(v.out, func(i, j int) bool {
		a, b := v.out[i], v.out[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Rule < b.Rule
	})
	return v.out
}

func (v *validator) add(rule int, file string, line int, format string, args ...any) {
	v.out = append(v.out, Violation{Rule: rule, File: file, Line: line, Severity: SeverityError, Msg: fmt.Sprintf(format, args...)})
}

func (v *validator) warn(rule int, file string, msg string) {
	v.out = append(v.out, Violation{Rule: rule, File: file, Severity: SeverityWarning, Msg: msg})
}

// allowedFile reports the non-.md files rule 9 permits: taskie's own
// files, its two lock files (the state lock and the review lock), and the
// temp files of its atomic writes, ".<name>.md.tmp…" or ".<name>.json.tmp…"
// beside any file it rewrites, which a validation may see mid-save.
func allowedFile(name string) bool {
	switch name {
	case "state.json", "events.jsonl", ".lock", ".review.lock":
		return true
	}
	return isTempFile(name)
}

// isTempFile matches ".<something>.md.tmp*" and ".<something>.json.tmp*"
// with a non-empty something.
func isTempFile(name string) bool {
	if !strings.HasPrefix(name, ".") {
		return false
	}
	for _, ext := range []string{".md.tmp", ".json.tmp"} {
		if i := strings.Index(name, ext); i > 1 {
			return true
		}
	}
	return false
}

// scan classifies the top-level entries (rules 2, 3 and 9).
func (v *validator) scan(entries []ListEntry) {
	for _, e := range entries {
		name := e.Name
		switch {
		case e.Mode.IsDir() && strings.HasSuffix(name, ".md"):
			v.add(2, name, 0, "%s is a directory, not a file; plan files must be regular files", name)
			v.walkNested(name)
		case e.Mode.IsDir():
			v.walkNested(name)
		case strings.HasSuffix(name, ".md") && !e.Mode.IsRegular():
			v.add(2, name, 0, "%s is not a regular file (%s); plan files must be regular files", name, kindOf(e.Mode))
		case strings.HasSuffix(name, ".md"):
			fn := ParseFileName(name)
			if fn.Kind == KindUnknown {
				v.add(2, name, 0, "%s is not a plan file name; expected plan.md, design.md, tasks.md, task-T.md or a review file such as task-T-review-N.md", name)
				continue
			}
			v.md = append(v.md, mdFile{name, fn})
			switch fn.Kind {
			case KindPlan:
				v.hasPlan = true
			case KindDesign:
				v.hasDesign = true
			case KindTasks:
				v.hasTasks = true
			case KindTask:
				v.taskFiles[fn.Task] = true
			}
		case allowedFile(name) && (e.Mode.IsRegular() || name == ".lock" || name == ".review.lock"):
			v.present[name] = true
		case name == "state.json":
			// A state.json taskie cannot read is rule 8, a warning: the
			// Stop hook allows, and says why, instead of blocking on it.
			v.warn(8, name, fmt.Sprintf("%s is not a regular file (%s); taskie only reads regular files", name, kindOf(e.Mode)))
		case allowedFile(name):
			v.add(9, name, 0, "%s is not a regular file (%s); taskie only reads regular files", name, kindOf(e.Mode))
		default:
			v.add(9, name, 0, "unexpected file %s: a plan directory holds only .md files, state.json, events.jsonl and .lock", name)
		}
	}
}

// walkNested reports every file below a subdirectory: .md files under
// rule 3, anything else under rule 9. Symlinked directories are not
// followed, so a link cannot make the walk leave the plan.
func (v *validator) walkNested(sub string) {
	root := filepath.Join(v.dir, sub)
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		rel := v.rel(path)
		if err != nil {
			v.add(3, rel, 0, "cannot read %s: %v", rel, err)
			return nil
		}
		switch {
		case d.IsDir():
		case strings.HasSuffix(d.Name(), ".md"):
			v.add(3, rel, 0, "%s is in a subdirectory; .md files must be directly in the plan directory", rel)
		default:
			v.add(9, rel, 0, "unexpected file %s: a plan directory holds only .md files, state.json, events.jsonl and .lock", rel)
		}
		return nil
	})
}

func (v *validator) rel(path string) string {
	r, err := filepath.Rel(v.dir, path)
	if err != nil {
		return filepath.ToSlash(path)
	}
	return filepath.ToSlash(r)
}

// checkPlan is rule 1.
func (v *validator) checkPlan() {
	if !v.hasPlan {
		v.add(1, "plan.md", 0, "plan.md is missing")
	}
}

// kindOf names the type of a non-regular file for messages.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return "not a regular file"
}
