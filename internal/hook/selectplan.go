package hook

import (
	"bytes"
	"io"
	"os"
	"sort"
	"time"

	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
)

// transcriptTail is how much of the transcript is searched for plan ids.
const transcriptTail = 256 << 10

type candidate struct {
	id    string
	mtime time.Time
	owner string
}

// SelectPlan picks the plan this session drives (SPEC §5 step 3): the plan
// whose state.json names the session; else, among plans no live session
// owns, the one the transcript mentioned last, else the most recently
// modified. "" when there is none.
func SelectPlan(r *plan.Repo, in Input, now time.Time) string {
	ids, err := r.Plans()
	if err != nil || len(ids) == 0 {
		return ""
	}
	var free []candidate
	for _, id := range ids {
		c := candidate{id: id, mtime: planMtime(r, id)}
		if dir, err := r.PlanDir(id); err == nil {
			if s, err := state.Load(dir); err == nil {
				c.owner = s.SessionID
			}
		}
		if in.SessionID != "" && c.owner == in.SessionID {
			return id
		}
		if c.owner == "" || !Live(r.TaskieDir(), c.owner, now) {
			free = append(free, c)
		}
	}
	if len(free) == 0 {
		return ""
	}
	sort.SliceStable(free, func(i, j int) bool { return free[i].mtime.After(free[j].mtime) })
	if len(free) > 1 {
		if id := lastMentioned(in.TranscriptPath, free); id != "" {
			return id
		}
	}
	return free[0].id
}

func planMtime(r *plan.Repo, id string) time.Time {
	dir, err := r.PlanDir(id)
	if err != nil {
		return time.Time{}
	}
	var t time.Time
	for _, p := range []string{dir, state.Path(dir)} {
		if st, err := os.Stat(p); err == nil && st.ModTime().After(t) {
			t = st.ModTime()
		}
	}
	return t
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
