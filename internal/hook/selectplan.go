package hook

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/store"
)

// quietOwner is how long a live owner must have been silent before other
// sessions are told how to take its plan over (after /clear, say).
const quietOwner = 15 * time.Minute

// transcriptTail is how much of the transcript is searched for plan ids.
const transcriptTail = 256 << 10

type candidate struct {
	id      string
	mtime   time.Time
	owner   string
	pending bool // automation is waiting on this plan (next_phase set, not paused)
}

// SelectPlan picks the plan this session drives (SPEC §5 step 3):
//  1. the most recent plan this session owns (its state.json names the
//     session) on which automation is pending;
//  2. the plan the session's transcript mentions last, even if another
//     session owns it: working on a plan explicitly takes it over (a new
//     session resuming yesterday's plan);
//  3. among plans no other live session owns: the only one with automation
//     pending; else, when none is pending, the most recent (only validated).
//
// With several pending plans and no mention it picks none and says why:
// guessing could drive another session's plan.
func SelectPlan(fs *store.Files, in Input, now time.Time) (string, string) {
	r := fs.Repo
	ids, err := r.Plans()
	if err != nil || len(ids) == 0 {
		return "", ""
	}
	var all, mine, free, pending, taken []candidate
	for _, id := range ids {
		c := candidate{id: id, mtime: r.Mtime(id)}
		if s, err := fs.PeekState(id); err == nil {
			c.owner, c.pending = s.SessionID, s.IsEnabled() && s.Next() != ""
		}
		all = append(all, c)
		own := in.SessionID != "" && c.owner == in.SessionID
		if own && c.pending {
			mine = append(mine, c)
		}
		if own || c.owner == "" || !Live(fs.Root(), c.owner, now) {
			free = append(free, c)
			if c.pending {
				pending = append(pending, c)
			}
		} else if c.pending && now.Sub(LoadSession(fs.Root(), c.owner).LastSeen) > quietOwner {
			taken = append(taken, c)
		}
	}
	if len(mine) > 0 {
		return newest(mine).id, ""
	}
	if id := lastMentioned(in.TranscriptPath, all); id != "" {
		return id, ""
	}
	if len(pending) == 0 && len(taken) > 0 {
		// Say so rather than stay silent: after /clear a new session id
		// finds its own plan still owned by the previous, now quiet, one.
		t := newest(taken)
		return "", fmt.Sprintf("taskie: plan %q is owned by session %s, quiet for a while; to drive it from this session, name it (e.g. `taskie status --plan %s`) and stop again.", t.id, t.owner, t.id)
	}
	if len(free) == 0 {
		return "", ""
	}
	switch len(pending) {
	case 0:
		return newest(free).id, ""
	case 1:
		return pending[0].id, ""
	}
	names := make([]string, len(pending))
	for i, c := range pending {
		names[i] = c.id
	}
	return "", fmt.Sprintf("taskie: plans %s all await automation and this session has not worked on any of them, so none was driven. Name the one you mean (e.g. `taskie status --plan %s`) and stop again.",
		strings.Join(names, ", "), names[0])
}

func newest(cs []candidate) candidate {
	best := cs[0]
	for _, c := range cs[1:] {
		if c.mtime.After(best.mtime) {
			best = c
		}
	}
	return best
}

// lastMentioned returns the candidate whose plan path or id appears last in
// the tail of the session's transcript.
func lastMentioned(path string, cands []candidate) string {
	if path == "" {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > transcriptTail {
		_, _ = f.Seek(st.Size()-transcriptTail, io.SeekStart)
	}
	tail, err := io.ReadAll(io.LimitReader(f, transcriptTail))
	if err != nil {
		return ""
	}
	best, bestAt := "", -1
	for _, c := range cands {
		for _, pat := range []string{"plans/" + c.id + "/", "--plan " + c.id, "--plan=" + c.id, "plan new " + c.id} {
			at := lastWhole(tail, []byte(pat))
			if at > bestAt || at == bestAt && at >= 0 && len(c.id) > len(best) {
				best, bestAt = c.id, at
			}
		}
	}
	return best
}

// lastWhole is the last index of pat in b that is not followed by another id
// character, so "--plan auth-v2" is no mention of plan "auth".
func lastWhole(b, pat []byte) int {
	for end := len(b); ; {
		at := bytes.LastIndex(b[:end], pat)
		if at < 0 {
			return -1
		}
		if next := at + len(pat); pat[len(pat)-1] == '/' || next >= len(b) || !isIDByte(b[next]) {
			return at
		}
		end = at + len(pat) - 1
	}
}

func isIDByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
