package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// finding is one finding of an answer, every property present as the
// strict-mode schema requires.
type finding struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	Title    string `json:"title"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Status   string `json:"status"`
}

// parseFindings reads the JSON array after a step's keyword; "" is no
// findings at all (nil), "[]" an empty list.
func parseFindings(s string) ([]finding, error) {
	if s == "" {
		return nil, nil
	}
	var fs []finding
	if err := json.Unmarshal([]byte(s), &fs); err != nil {
		return nil, fmt.Errorf("findings %q: not a JSON array of findings: %v", s, err)
	}
	if fs == nil {
		fs = []finding{}
	}
	for i := range fs {
		if fs[i].Severity == "" {
			fs[i].Severity = "major"
		}
		if fs[i].Status == "" {
			fs[i].Status = "open"
		}
		if fs[i].Title == "" && fs[i].ID == "" {
			fs[i].Title = fmt.Sprintf("fake finding %d", i+1)
		}
	}
	return fs, nil
}

// findingsText lists the findings in the review text.
func findingsText(fs []finding) string {
	var b strings.Builder
	for i, f := range fs {
		where := f.File
		if f.Line > 0 {
			where = fmt.Sprintf("%s:%d", f.File, f.Line)
		}
		id := ""
		if f.ID != "" {
			id = f.ID + " "
		}
		fmt.Fprintf(&b, "%d. %s[%s] %s %s (%s)\n", i+1, id, f.Severity, where, f.Title, f.Status)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// recordIDs finds the ids of the findings on record a prompt lists, as
// ledger.ForReviewer writes them ("- F3 (major) …").
var recordIDs = regexp.MustCompile(`(?m)^- (F[0-9]+) \(`)

func promptIDs(prompt string) []string {
	i := strings.Index(prompt, "## Findings on record")
	if i < 0 {
		return nil
	}
	var ids []string
	for _, m := range recordIDs.FindAllStringSubmatch(prompt[i:], -1) {
		ids = append(ids, m[1])
	}
	return ids
}
