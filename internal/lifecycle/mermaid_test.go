package lifecycle

import (
	"strings"
	"testing"
)

func TestMermaid(t *testing.T) {
	got := Mermaid()
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if lines[0] != "stateDiagram-v2" || lines[1] != "    [*] --> pending" {
		t.Errorf("diagram starts %q", lines[:2])
	}
	have := map[string]bool{}
	for _, l := range lines {
		have[strings.TrimSpace(l)] = true
	}
	for _, tr := range Table() {
		edge := string(tr.From) + " --> " + string(tr.To) + ": " + tr.Why
		if !have[edge] {
			t.Errorf("missing edge %q", edge)
		}
	}
	for _, want := range []string{
		"pending --> assigned: task picked up",
		"quality_review --> in_progress: review failed, fix the code",
		"cto_intervention --> human_escalation: CTO attempts used up, or escalated",
		"completed --> [*]", "abandoned --> [*]", "end note",
	} {
		if !have[want] {
			t.Errorf("missing line %q", want)
		}
	}
	if n := strings.Count(got, " --> "); n != len(Table())+3 {
		t.Errorf("%d edges, want the %d rows plus start and two ends", n, len(Table()))
	}
}
