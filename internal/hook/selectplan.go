package hook

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
)

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
func SelectPlan(r *plan.Repo, in Input, now time.Time) (string, string) {
	ids, err := r.Plans()
	if err != nil || len(ids) == 0 {
		return "", ""
	}
	var all, mine, free, pending []candidate
	for _, id := range ids {
		c := candidate{id: id, mtime: r.Mtime(id)}
		if dir, err := r.PlanDir(id); err == nil {
			if s, err := state.Load(dir); err == nil {
				c.owner, c.pending = s.SessionID, s.IsEnabled() && s.Next() != ""
			}
		}
		all = append(all, c)
		own := in.SessionID != "" && c.owner == in.SessionID
		if own && c.pending {
			mine = append(mine, c)
		}
		if own || c.owner == "" || !Live(r.TaskieDir(), c.owner, now) {
			free = append(free, c)
			if c.pending {
				pending = append(pending, c)
			}
		}
	}
	if len(mine) > 0 {
		return newest(mine).id, ""
	}
	if id := lastMentioned(in.TranscriptPath, all); id != "" {
		return id, ""
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
			if at := bytes.LastIndex(tail, []byte(pat)); at > bestAt {
				best, bestAt = c.id, at
			}
		}
	}
	return best
}
