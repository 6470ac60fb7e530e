package review

import (
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"text/template"

	"github.com/taskie-dev/taskie/internal/domain"
)

//go:embed prompts/*.md
var promptFS embed.FS

// promptFiles maps each kind to its template; common.md holds the shared
// header, ground rules and output instructions.
var promptFiles = map[domain.Phase]string{
	domain.PlanReview:    "plan.md",
	domain.TasksReview:   "tasks.md",
	domain.CodeReview:    "code.md",
	domain.AllCodeReview: "allcode.md",
	CTOReview:            "cto.md",
}

// prompts are parsed on first use: the hook starts on every stop.
var prompts = sync.OnceValue(parsePrompts)

func parsePrompts() map[domain.Phase]*template.Template {
	m := make(map[domain.Phase]*template.Template, len(promptFiles))
	for kind, file := range promptFiles {
		m[kind] = template.Must(template.New(file).Option("missingkey=error").
			ParseFS(promptFS, "prompts/common.md", "prompts/"+file))
	}
	return m
}

// promptData is what the templates see: the request plus resolved paths.
type promptData struct {
	Request
	Title      string
	PlanFile   string
	DesignFile string // "" when the plan has no design.md
	TasksFile  string
	TaskFile   string   // code-review: task-{T}.md
	TaskPaths  []string // absolute paths of req.TaskFiles
	CyclePaths []string // CTO review: absolute paths of req.Cycle
}

// Prompt returns the reviewer prompt for req.
func Prompt(req Request) (string, error) {
	req = normalize(req)
	if err := check(req); err != nil {
		return "", err
	}
	d := promptData{
		Request:   req,
		Title:     title(req),
		PlanFile:  filepath.Join(req.PlanDir, "plan.md"),
		TasksFile: filepath.Join(req.PlanDir, "tasks.md"),
	}
	if p := filepath.Join(req.PlanDir, "design.md"); exists(p) {
		d.DesignFile = p
	}
	for _, f := range req.Cycle {
		d.CyclePaths = append(d.CyclePaths, filepath.Join(req.PlanDir, f))
	}
	if req.Kind == domain.CodeReview || req.Kind == CTOReview {
		d.TaskFile = filepath.Join(req.PlanDir, "task-"+req.Task.String()+".md")
	}
	for _, f := range req.TaskFiles {
		d.TaskPaths = append(d.TaskPaths, filepath.Join(req.PlanDir, f))
	}
	var b strings.Builder
	if err := prompts()[req.Kind].Execute(&b, d); err != nil {
		return "", fmt.Errorf("%s prompt: %w", req.Kind, err)
	}
	return b.String(), nil
}

func title(req Request) string {
	switch req.Kind {
	case domain.PlanReview:
		return "Plan review"
	case domain.TasksReview:
		return "Tasks review"
	case domain.CodeReview:
		return "Code review of task " + req.Task.String()
	case CTOReview:
		return "CTO review of task " + req.Task.String()
	default:
		return "All-code review"
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
