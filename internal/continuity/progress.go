package continuity

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Size thresholds of a task file (docs/continuity.md).
const (
	WarnSize      = 50 * 1024 // warn when a task file grows past this
	ArchiveSize   = 75 * 1024 // at this size old sessions move to the archive
	KeepSessions  = 5         // sessions left in place by an archive
	SplitSessions = 20        // more sessions than this: suggest splitting the task
)

// Entry is what one session reports.
type Entry struct {
	Did    string `json:"did"`
	Issues string `json:"issues,omitempty"`
	Next   string `json:"next,omitempty"`
}

// Session is one entry of the Progress Log.
type Session struct {
	// N is the session number: as written in "### Session N", else one
	// more than the entry before. For an archive summary it is the last
	// archived session and From the first.
	N        int    `json:"session"`
	From     int    `json:"from,omitempty"`
	Archived bool   `json:"archived,omitempty"`
	Heading  string `json:"heading"`
	TS       string `json:"ts,omitempty"`
	Entry
	Text string `json:"text,omitempty"` // the body when it has no Did/Issues/Next fields
	sp   span
}

// Sessions returns the entries of the Progress Log in order: each "###"
// heading of the section starts one.
func (f *File) Sessions() []Session {
	sp, ok := f.section(SectionProgress)
	if !ok {
		return nil
	}
	hs := f.headsIn(sp)
	out := make([]Session, 0, len(hs))
	prev := 0
	for k, h := range hs {
		if h.level != 3 {
			continue
		}
		end := sp.end
		for _, n := range hs[k+1:] {
			if n.level == 3 {
				end = n.line
				break
			}
		}
		s := f.parseSession(h, span{h.line, end}, prev)
		prev = s.N
		out = append(out, s)
	}
	return out
}

// parseSession reads one entry; prev is the number of the entry before.
func (f *File) parseSession(h heading, sp span, prev int) Session {
	s := Session{Heading: h.text, N: prev + 1, sp: sp}
	if from, to, ok := parseArchived(h.text); ok {
		s.Archived, s.From, s.N = true, from, to
	} else if n, ts, ok := parseSessionHeading(h.text); ok {
		s.N, s.TS = n, ts
	}
	body := make([]string, 0, sp.end-sp.start-1)
	for i := sp.start + 1; i < sp.end; i++ {
		body = append(body, f.text(i))
	}
	if !parseFields(body, &s.Entry) {
		s.Text = strings.TrimSpace(strings.Join(body, "\n"))
	}
	return s
}

// parseSessionHeading reads "Session N — ts" (any dash, or none).
func parseSessionHeading(text string) (int, string, bool) {
	rest, ok := cutWord(text, "session")
	if !ok {
		return 0, "", false
	}
	digits := len(rest) - len(strings.TrimLeft(rest, "0123456789"))
	n, err := strconv.Atoi(rest[:digits])
	if err != nil {
		return 0, "", false
	}
	ts := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(rest[digits:]), "—–-:"))
	return n, ts, true
}

// parseArchived reads the summary heading "Sessions a–b archived".
func parseArchived(text string) (from, to int, ok bool) {
	rest, ok := cutWord(text, "sessions")
	if !ok || !strings.Contains(strings.ToLower(rest), "archived") {
		return 0, 0, false
	}
	a, b, ok := strings.Cut(strings.Fields(rest)[0], "–")
	if !ok {
		a, b, ok = strings.Cut(strings.Fields(rest)[0], "-")
	}
	from, err1 := strconv.Atoi(a)
	to, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return from, to, true
}

// cutWord removes a leading word (case-insensitive) followed by a space.
func cutWord(text, word string) (string, bool) {
	if len(text) <= len(word) || !strings.EqualFold(text[:len(word)], word) || (text[len(word)] != ' ' && text[len(word)] != '\t') {
		return "", false
	}
	rest := strings.TrimSpace(text[len(word):])
	return rest, rest != ""
}

// fieldNames maps the field labels to the Entry fields.
var fieldNames = []string{"did", "issues", "next"}

// parseFields reads "- **Did**: x" lines (also "- **Did:** x" and
// "- Did: x"); indented lines continue a field. It reports whether any
// field was found.
func parseFields(body []string, e *Entry) bool {
	var cur *string
	var pending []string // blank lines, kept only if the field goes on
	found := false
	for _, l := range body {
		if name, val, ok := parseField(l); ok {
			cur, pending, found = e.field(name), nil, true
			*cur = val
			continue
		}
		switch {
		case cur == nil:
		case strings.TrimSpace(l) == "":
			pending = append(pending, "")
		case l[0] == ' ' || l[0] == '\t':
			for _, p := range pending {
				*cur += "\n" + p
			}
			pending = nil
			*cur += "\n" + strings.TrimPrefix(strings.TrimPrefix(l, " "), " ")
		default:
			cur = nil
		}
	}
	return found
}

func (e *Entry) field(name string) *string {
	switch name {
	case "did":
		return &e.Did
	case "issues":
		return &e.Issues
	}
	return &e.Next
}

// parseField recognises one field line and returns its lower-case name.
func parseField(line string) (name, val string, ok bool) {
	t, ok := strings.CutPrefix(line, "- ")
	if !ok {
		if t, ok = strings.CutPrefix(line, "* "); !ok {
			return "", "", false
		}
	}
	t = strings.TrimSpace(t)
	bold := strings.HasPrefix(t, "**")
	t = strings.TrimPrefix(t, "**")
	for _, n := range fieldNames {
		if len(t) <= len(n) || !strings.EqualFold(t[:len(n)], n) {
			continue
		}
		rest := t[len(n):]
		var cut bool
		for _, sep := range []string{"**:", ":**", ":"} {
			if r, c := strings.CutPrefix(rest, sep); c && (bold || sep == ":") {
				rest, cut = r, true
				break
			}
		}
		if cut {
			return n, strings.TrimSpace(rest), true
		}
	}
	return "", "", false
}

// renderSession returns the lines of a new entry.
func renderSession(n int, ts time.Time, e Entry) []string {
	out := []string{fmt.Sprintf("### Session %d — %s", n, ts.UTC().Format(time.RFC3339))}
	out = append(out, renderField("Did", e.Did)...)
	out = append(out, renderField("Issues", orNone(e.Issues))...)
	return append(out, renderField("Next", orNone(e.Next))...)
}

// renderField writes a field; its further lines are indented so they stay
// in the list item.
func renderField(name, val string) []string {
	ls := strings.Split(normalize(val), "\n")
	out := []string{fmt.Sprintf("- **%s**: %s", name, ls[0])}
	for _, l := range ls[1:] {
		if strings.TrimSpace(l) != "" {
			l = "  " + l
		}
		out = append(out, l)
	}
	return out
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "none"
	}
	return s
}

// normalize turns CRLF into LF and trims surrounding blank space.
func normalize(s string) string {
	return strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n"))
}

// AddSession appends an entry to the Progress Log, creating the section at
// the end of the file when missing, and returns its number: one more than
// the highest so far.
func (f *File) AddSession(ts time.Time, e Entry) (int, error) {
	if strings.TrimSpace(e.Did) == "" {
		return 0, fmt.Errorf("a progress entry needs Did")
	}
	n := 1
	for _, s := range f.Sessions() {
		n = max(n, s.N+1)
	}
	entry := renderSession(n, ts, e)
	if err := checkBlock(entry, true); err != nil {
		return 0, err
	}
	sp, ok := f.section(SectionProgress)
	if !ok {
		f.appendBlock(append([]string{"## " + SectionProgress, ""}, entry...))
		return n, nil
	}
	end := f.trimBlank(sp).end
	f.splice(end, end, append([]string{""}, entry...))
	return n, nil
}

// Archived describes sessions moved out of a task file.
type Archived struct {
	From, To int    // session numbers
	Count    int    // entries moved
	Text     []byte // the moved entries, to append to the archive file
}

// Archive moves all but the last keep entries of the Progress Log out of
// the file and puts a one-paragraph summary entry in their place; link is
// the archive's path as the summary names it. Earlier summaries are
// replaced, not archived. ok is false when there is nothing to move.
func (f *File) Archive(keep int, link string) (Archived, bool) {
	ss := f.Sessions()
	if len(ss) <= keep {
		return Archived{}, false
	}
	moved := ss[:len(ss)-keep]
	a := Archived{From: moved[0].N, To: moved[0].N}
	var text strings.Builder
	for _, s := range moved {
		a.To = max(a.To, s.N)
		if s.Archived {
			a.From = min(a.From, s.From)
			continue
		}
		a.From = min(a.From, s.N)
		a.Count++
		for i := s.sp.start; i < s.sp.end; i++ {
			text.WriteString(f.lines[i])
		}
	}
	if a.Count == 0 {
		return Archived{}, false
	}
	a.Text = []byte(text.String())
	if len(a.Text) > 0 && a.Text[len(a.Text)-1] != '\n' {
		a.Text = append(a.Text, f.eol...)
	}
	f.splice(moved[0].sp.start, moved[len(moved)-1].sp.end, summaryEntry(a, keep, link))
	return a, true
}

// summaryEntry is the entry left in place of archived sessions.
func summaryEntry(a Archived, keep int, link string) []string {
	return []string{
		fmt.Sprintf("### Sessions %d–%d archived", a.From, a.To),
		fmt.Sprintf("Sessions %d–%d were archived to `%s` when this file reached %d KB; "+
			"read it only if the history below is not enough. The last %d sessions follow.",
			a.From, a.To, link, ArchiveSize/1024, keep),
		"",
	}
}
