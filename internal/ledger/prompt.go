package ledger

import (
	"fmt"
	"strconv"
	"strings"
)

// ForReviewer returns the ledger as the next reviewer should see it: a
// compact markdown list of the open findings, of those the post-review
// marked fixed that no reviewer has confirmed yet, and of the declined ones
// with their reason — each with its id, to be re-checked and reported fixed
// or open, besides looking afresh. It returns "" when there is nothing to
// re-check.
func ForReviewer(l Ledger) string {
	var open, fixed, declined []string
	for _, f := range l.findings {
		switch {
		case f.Status == Open:
			open = append(open, item(f, ""))
		case f.Status == Fixed && !f.Confirmed():
			fixed = append(fixed, item(f, "Fix: "))
		case f.Status == Declined:
			declined = append(declined, item(f, "Why: "))
		}
	}
	if len(open)+len(fixed)+len(declined) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Findings on record\n\n" +
		"Earlier reviews of this cycle reported these findings. Re-check each one and report it in " +
		"`findings` with its id and status `fixed` or `open`, and the severity you judge it has now " +
		"(a changed severity is recorded), besides looking afresh; a new finding " +
		"has id \"\". Do not report a finding on record again as new.\n")
	section(&b, "Open", open)
	section(&b, "Marked fixed by the author, to verify", fixed)
	section(&b, "Declined by the author (report one `open` only if the reason does not hold)", declined)
	return b.String()
}

func section(b *strings.Builder, title string, items []string) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s:\n", title)
	for _, it := range items {
		fmt.Fprintf(b, "- %s\n", it)
	}
}

// item writes one finding on a line: "F3 (major) a.go:12 — title. Why: …".
func item(f Finding, notePrefix string) string {
	s := f.ID + " (" + string(f.Severity) + ")"
	if loc := location(f); loc != "" {
		s += " " + loc
	}
	s += " — " + f.Title
	if notePrefix != "" && f.Note != "" {
		s += ". " + notePrefix + f.Note
	}
	return s
}

func location(f Finding) string {
	if f.File == "" || f.Line <= 0 {
		return f.File
	}
	return f.File + ":" + strconv.Itoa(f.Line)
}

// Describe lists the findings with the given ids in markdown, one a line,
// with how often each came back: for the message of a cycle that needs a
// human (Assessment.Going). Unknown ids are skipped.
func Describe(l Ledger, ids []string) string {
	var b strings.Builder
	for _, id := range ids {
		f, ok := l.Find(id)
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "- %s", item(f, ""))
		if f.Reopened > 0 {
			fmt.Fprintf(&b, " (reported open again %d×)", f.Reopened)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Header returns the column names of Table.
func Header() []string {
	return []string{"ID", "SEVERITY", "STATUS", "OPENED", "LOCATION", "TITLE", "NOTE"}
}

// Table returns one row per finding, in id order, for `taskie findings`;
// only the open ones when open is true. OPENED is the iteration that first
// reported the finding; a fixed finding no reviewer has confirmed yet has
// status "fixed?".
func Table(l Ledger, open bool) [][]string {
	var rows [][]string
	for _, f := range l.findings {
		if open && f.Status != Open {
			continue
		}
		status := string(f.Status)
		if f.Status == Fixed && !f.Confirmed() {
			status += "?"
		}
		rows = append(rows, []string{f.ID, string(f.Severity), status, strconv.Itoa(f.Opened),
			location(f), f.Title, f.Note})
	}
	return rows
}
