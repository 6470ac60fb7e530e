package serve

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/taskie-dev/taskie/internal/needs"
)

// kindLabel is a needs-you kind in words.
func kindLabel(kind string) string {
	switch needs.Kind(kind) {
	case needs.StoreUnreachable:
		return "store unreachable"
	case needs.CloneNotImported:
		return "clone not imported"
	case needs.ConfigUntrusted:
		return "config untrusted"
	case needs.CodexHook:
		return "Codex hook skipped"
	case needs.ReviewerFailing:
		return "reviewer failing"
	case needs.HumanEscalation:
		return "escalated to you"
	case needs.NeedsHuman:
		return "review needs you"
	case needs.ReviewCap:
		return "review cap reached"
	case needs.BudgetSpent:
		return "budget spent"
	case needs.Timeout:
		return "past its timeout"
	case needs.ExpiredLease:
		return "lease expired"
	case needs.Stalled:
		return "stalled"
	}
	return strings.ReplaceAll(kind, "_", " ")
}

// severe is a kind's severity as a word (also its CSS class): the badge
// says it in text, the colour only repeats it.
func severe(kind string) string {
	switch needs.Kind(kind).Severity() {
	case needs.Blocking:
		return "blocking"
	case needs.Decision:
		return "decision"
	}
	return "stuck"
}

// The lifecycle drawing: the main path down the left, the states off it
// on the right.
var (
	mainPath = []string{"pending", "assigned", "planning", "validated", "in_progress", "testing", "quality_review", "approved", "committing", "completed"}
	sidePath = []string{"cto_intervention", "human_escalation", "abandoned"} // beside rows 3, 5, 7
)

// lifecycleSVG draws the task lifecycle with the number of tasks in each
// state; a state holding tasks has a thick border and its count in bold.
func lifecycleSVG(counts []StateCount) template.HTML {
	n := map[string]int{}
	total := 0
	for _, c := range counts {
		n[c.State] = c.N
		total += c.N
	}
	const w, h, gap, x0, x1 = 190, 30, 12, 8, 262
	height := len(mainPath)*(h+gap) + 4
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="lifecycle" viewBox="0 0 460 %d" role="img" aria-labelledby="lc-title">`, height)
	fmt.Fprintf(&b, `<title id="lc-title">Task lifecycle: %d task(s); %s</title>`, total, template.HTMLEscapeString(countsText(counts)))
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="arrowhead"/></marker></defs>`)
	box := func(state string, x, y int, side bool) {
		cls := "st"
		if n[state] > 0 {
			cls += " busy"
		}
		if side {
			cls += " side"
		}
		fmt.Fprintf(&b, `<g class="%s"><rect x="%d" y="%d" width="%d" height="%d" rx="6"/>`, cls, x, y, w, h)
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text><text class="n" x="%d" y="%d" text-anchor="end">%d</text></g>`,
			x+10, y+20, strings.ReplaceAll(state, "_", " "), x+w-10, y+20, n[state])
	}
	for i, st := range mainPath {
		y := 2 + i*(h+gap)
		box(st, x0, y, false)
		if i+1 < len(mainPath) {
			fmt.Fprintf(&b, `<line class="edge" x1="%d" y1="%d" x2="%d" y2="%d" marker-end="url(#arrow)"/>`, x0+w/2, y+h, x0+w/2, y+h+gap-1)
		}
	}
	for i, st := range sidePath {
		y := 2 + (3+2*i)*(h+gap) + (h+gap)/2
		box(st, x1, y, true)
		fmt.Fprintf(&b, `<line class="edge side" x1="%d" y1="%d" x2="%d" y2="%d" marker-end="url(#arrow)"/>`, x0+w, y+h/2, x1-2, y+h/2)
	}
	fmt.Fprintf(&b, `<text class="note" x="%d" y="%d">from any working state</text>`, x1, 2+2*(h+gap)+h)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func countsText(counts []StateCount) string {
	var parts []string
	for _, c := range counts {
		if c.N > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", c.State, c.N))
		}
	}
	if len(parts) == 0 {
		return "no task has a lifecycle record"
	}
	return strings.Join(parts, ", ")
}

// costSVG draws the plan's review cost (and tokens, when the reviewers
// reported them) accumulated over time.
func costSVG(pts []CostPoint) template.HTML {
	if len(pts) == 0 {
		return ""
	}
	const W, H, L, R, T, B = 600, 180, 56, 64, 12, 34
	t0, t1 := pts[0].At, pts[len(pts)-1].At
	span := t1.Sub(t0).Seconds()
	maxC, maxT := pts[len(pts)-1].Total, pts[len(pts)-1].TotalTok
	x := func(i int) float64 {
		if span <= 0 {
			if len(pts) == 1 {
				return L + (W-L-R)/2
			}
			return L + float64(i)*(W-L-R)/float64(len(pts)-1)
		}
		return L + pts[i].At.Sub(t0).Seconds()/span*(W-L-R)
	}
	y := func(v, max float64) float64 {
		if max <= 0 {
			return H - B
		}
		return H - B - v/max*(H-B-T)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" role="img" aria-labelledby="cost-title">`, W, H)
	tok := ""
	if maxT > 0 {
		tok = fmt.Sprintf(", %d tokens", maxT)
	}
	fmt.Fprintf(&b, `<title id="cost-title">Review cost over time: $%.2f%s over %d review(s), %s to %s</title>`,
		maxC, tok, len(pts), t0.Local().Format("2006-01-02 15:04"), t1.Local().Format("2006-01-02 15:04"))
	fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/><line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>`, L, T, L, H-B, L, H-B, W-R, H-B)
	fmt.Fprintf(&b, `<text class="lbl" x="%d" y="%d" text-anchor="end">$%.2f</text><text class="lbl" x="%d" y="%d" text-anchor="end">$0</text>`, L-6, T+10, maxC, L-6, H-B)
	fmt.Fprintf(&b, `<text class="lbl" x="%d" y="%d">%s</text><text class="lbl" x="%d" y="%d" text-anchor="end">%s</text>`,
		L, H-B+20, t0.Local().Format("01-02 15:04"), W-R, H-B+20, t1.Local().Format("01-02 15:04"))
	line := func(cls string, val func(CostPoint) float64, max float64) {
		var ps []string
		for i, p := range pts {
			ps = append(ps, fmt.Sprintf("%.1f,%.1f", x(i), y(val(p), max)))
		}
		fmt.Fprintf(&b, `<polyline class="%s" points="%s"/>`, cls, strings.Join(ps, " "))
		for i, p := range pts {
			fmt.Fprintf(&b, `<circle class="%s" cx="%.1f" cy="%.1f" r="3"/>`, cls, x(i), y(val(p), max))
		}
	}
	line("cost", func(p CostPoint) float64 { return p.Total }, maxC)
	if maxT > 0 {
		line("tokens", func(p CostPoint) float64 { return float64(p.TotalTok) }, float64(maxT))
		fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/><text class="lbl" x="%d" y="%d">%d tok</text>`, W-R, T, W-R, H-B, W-R+4, T+10, maxT)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
