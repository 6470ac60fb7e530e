package planchoice

import (
	"bytes"
	"cmp"
	"slices"
)

// Mentions returns the known plan ids that tail names, in order of their
// last occurrence: the last element is the most recent. A plan is named by
// `plans/<id>/`, `--plan <id>`, `--plan=<id>` or `plan new <id>` (boolean
// flags such as --auto may come between `new` and the id). An id is taken
// whole: "--plan auth-v2" names auth-v2, never auth.
//
// tail is scanned once, whatever the number of plans; known is called once
// per distinct id found. To count the agent's last words, which the
// transcript may not hold yet, the caller appends the hook input's
// last_assistant_message to the transcript tail, after a newline.
func Mentions(tail []byte, known func(id string) bool) []string {
	last := map[string]int{} // id → end of its last mention; -1: unknown id
	for p := 0; ; {
		i := bytes.Index(tail[p:], plan)
		if i < 0 {
			break
		}
		at := p + i
		id, end := mentionAt(tail, at)
		p = at + len(plan)
		if id == nil {
			continue
		}
		if pos, seen := last[string(id)]; !seen {
			s := string(id)
			last[s] = -1
			if known(s) {
				last[s] = end
			}
		} else if pos >= 0 {
			last[string(id)] = end
		}
	}
	return byPosition(last)
}

var (
	plan    = []byte("plan")
	plansID = []byte("s/")
	newID   = []byte(" new ")
)

// mentionAt returns the id named by a pattern whose "plan" starts at at, and
// where the id ends, or nil.
func mentionAt(b []byte, at int) ([]byte, int) {
	rest := at + len(plan)
	switch {
	case bytes.HasPrefix(b[rest:], plansID):
		id, end := idAt(b, rest+len(plansID))
		if end < len(b) && b[end] == '/' {
			return id, end
		}
	case at >= 2 && b[at-2] == '-' && b[at-1] == '-' && rest < len(b) && (b[rest] == ' ' || b[rest] == '='):
		return idAt(b, rest+1)
	case bytes.HasPrefix(b[rest:], newID):
		return idAt(b, skipFlags(b, rest+len(newID)))
	}
	return nil, 0
}

// idAt returns the whole id starting at i, or nil.
func idAt(b []byte, i int) ([]byte, int) {
	end := i
	for end < len(b) && isIDByte(b[end]) {
		end++
	}
	if end == i {
		return nil, 0
	}
	return b[i:end], end
}

// skipFlags skips the words starting with '-' at i, each followed by a
// space, as in `plan new --auto --tdd api`.
func skipFlags(b []byte, i int) int {
	for i < len(b) && b[i] == '-' {
		j := i
		for j < len(b) && isIDByte(b[j]) {
			j++
		}
		if j >= len(b) || b[j] != ' ' {
			return i
		}
		i = j + 1
	}
	return i
}

func byPosition(last map[string]int) []string {
	var ids []string
	for id, pos := range last {
		if pos >= 0 {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b string) int { return cmp.Compare(last[a], last[b]) })
	return ids
}

func isIDByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// isID reports whether s matches ^[A-Za-z0-9_-]+$.
func isID(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isIDByte(s[i]) {
			return false
		}
	}
	return s != ""
}
