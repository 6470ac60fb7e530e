package continuity

import (
	"errors"
	"io/fs"
	"sort"
	"strconv"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/store"
)

// LoggedNote is a progress entry as its PROGRESS event records it.
type LoggedNote struct {
	Task    domain.TaskID `json:"task,string"`
	Session int           `json:"session"`
	Did     string        `json:"did"`
}

// MissingNotes returns the logged entries that neither the task file nor
// its archive holds: a note cut short between its event, which is written
// first, and its file. The log keeps their text, so nothing is lost.
func MissingNotes(p *store.Plan, logged []LoggedNote) ([]LoggedNote, error) {
	held := map[domain.TaskID]map[int]bool{}
	var out []LoggedNote
	for _, n := range logged {
		h, ok := held[n.Task]
		if !ok {
			var err error
			if h, err = heldSessions(p, n.Task); err != nil {
				return nil, err
			}
			held[n.Task] = h
		}
		if !h[n.Session] {
			out = append(out, n)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Task != out[j].Task {
			return out[i].Task < out[j].Task
		}
		return out[i].Session < out[j].Session
	})
	return out, nil
}

// heldSessions is the set of session numbers task id's progress log holds:
// its entries, the ranges its archive summaries cover, and the entries of
// its archive file.
func heldSessions(p *store.Plan, id domain.TaskID) (map[int]bool, error) {
	h := map[int]bool{}
	data, err := p.Store.Root().ReadFile(store.Rel(p.ID, plan.TaskFile(int(id))))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, s := range Parse(data).Sessions() {
		lo := s.N
		if s.From > 0 { // an archive summary
			lo = s.From
		}
		for n := lo; n <= s.N; n++ {
			h[n] = true
		}
	}
	arch, err := p.Store.Root().ReadFile(ArchiveRel(p.ID, id))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, m := range sessionHeading().FindAllSubmatch(arch, -1) {
		if n, err := strconv.Atoi(string(m[1])); err == nil {
			h[n] = true
		}
	}
	return h, nil
}
