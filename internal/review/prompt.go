package review

import (
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"text/template"
)

//go:embed prompts/*.md
var promptFS embed.FS

// promptFiles maps each kind to its template; common.md holds the shared
// header, ground rules and output instructions.
var promptFiles = map[string]string{
	Plan:    "plan.md",
	Tasks:   "tasks.md",
	Code:    "code.md",
	AllCode: "allcode.md",
}

// prompts are parsed on first use: the hook starts on every stop.
var prompts = sync.OnceValue(parsePrompts)

func parsePrompts() map[string]*template.Template {
	m := make(map[string]*template.Template, len(promptFiles))
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
	if req.Kind == Code {
		d.TaskFile = filepath.Join(req.PlanDir, "task-"+req.Task+".md")
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
	case Plan:
		return "Plan review"
	case Tasks:
		return "Tasks review"
	case Code:
		return "Code review of task " + req.Task
	default:
		return "All-code review"
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
