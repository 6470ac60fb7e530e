package continuity

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// fit shares budget among parts of the given sizes: in increasing size,
// each part gets its size or an equal share of what is left, whichever is
// smaller. The caps never sum to more than budget.
func fit(sizes []int, budget int) []int {
	order := make([]int, len(sizes))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(sizes[a], sizes[b]) })
	caps := make([]int, len(sizes))
	left := max(budget, 0)
	for k, i := range order {
		share := left / (len(order) - k)
		caps[i] = min(sizes[i], share)
		left -= caps[i]
	}
	return caps
}

// clipText returns s when it fits in limit bytes, else its start (cut at a
// space when one is near), a space and more; "" when not even more fits.
func clipText(s string, limit int, more string) string {
	if len(s) <= limit {
		return s
	}
	room := limit - len(more) - 1
	if room <= 0 {
		return ""
	}
	cut := room
	for cut > 0 && !runeStart(s[cut]) {
		cut--
	}
	if sp := strings.LastIndexAny(s[:cut], " \n\t"); sp > cut*3/4 {
		cut = sp
	}
	return strings.TrimRight(s[:cut], " \n\t") + " " + more
}

func runeStart(b byte) bool { return b&0xC0 != 0x80 }

// clipList renders head and one line per item, as many items as fit in
// limit, then a line saying how many were left out (more is a format with
// one %d); "" when not even that fits.
func clipList(head string, items []string, limit int, more string) string {
	total := len(head) + 1
	for _, it := range items {
		total += len(it) + 1
	}
	if total <= limit {
		return head + "\n" + strings.Join(items, "\n") + "\n"
	}
	moreLine := func(n int) string { return fmt.Sprintf(more, n) + "\n" }
	var s strings.Builder
	s.WriteString(head + "\n")
	for i, it := range items {
		if s.Len()+len(it)+1+len(moreLine(len(items)-i-1)) > limit {
			// Room for this line was kept when the item before was added.
			if m := moreLine(len(items) - i); s.Len()+len(m) <= limit {
				return s.String() + m
			}
			return ""
		}
		s.WriteString(it + "\n")
	}
	return s.String() // not reached: the items did not all fit
}

// clipEach renders head and every item, sharing what limit leaves among the
// items; a clipped item ends with more(i). Items left with too little room
// are dropped.
func clipEach(head string, items []string, limit int, more func(i int) string) string {
	room := limit - len(head) - 1
	if room < 0 {
		return ""
	}
	sizes := make([]int, len(items))
	for i, it := range items {
		sizes[i] = len(it) + 1
	}
	caps := fit(sizes, room)
	var s strings.Builder
	s.WriteString(head + "\n")
	for i, it := range items {
		if caps[i] < 40 && caps[i] < sizes[i] {
			continue
		}
		s.WriteString(clipText(it+"\n", caps[i], more(i)+"\n"))
	}
	return s.String()
}
