package implied

import (
	"bufio"
	"encoding/json"
	"maps"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/taskrec"
)

// View is every task of plan p as every view shows it: its one record
// (taskrec.Fold) read from snapshot s (p's when nil). What in leaves
// empty is read here: tasks.md and state.json from the snapshot, the
// lifecycle records from state.json (a shared store's are handed in),
// the timeouts from the configuration, the plan's creation from its log,
// now from the plan's clock. A task waiting in committing whose commit
// is there is completed in memory only: a read never writes, the next
// change records it. Claims, results and open findings are the caller's
// to read (the coordination store, the ledger) when it shows them.
func View(p *store.Plan, s *store.Snapshot, in taskrec.Input) []taskrec.Record {
	if s == nil {
		s, _ = p.Snapshot()
	}
	if s != nil {
		if in.Tasks == nil {
			in.Tasks = s.Tasks
		}
		if in.State == nil {
			in.State = s.State
		}
	}
	if in.Records == nil {
		recs, err := taskrec.Records(in.State)
		if err != nil {
			recs = nil // `taskie validate` reports the field
		}
		in.Records = recs
	} else {
		in.Records = maps.Clone(in.Records) // settled below, in place
	}
	if in.Records == nil {
		in.Records = map[domain.TaskID]lifecycle.Task{}
	}
	before := make(map[domain.TaskID]lifecycle.State, len(in.Records))
	for id, t := range in.Records {
		before[id] = t.State
	}
	if len(SettledView(p, in.Records)) > 0 {
		for id, t := range in.Records {
			if before[id] != t.State {
				if in.Unwritten == nil {
					in.Unwritten = map[domain.TaskID]lifecycle.State{}
				}
				in.Unwritten[id] = before[id]
			}
		}
	}
	if in.Timeouts == nil && !in.Untimed {
		in.Timeouts = timeouts(p)
	}
	if in.Now.IsZero() {
		in.Now = p.Store.Now()
	}
	if in.Created.IsZero() && !in.Untimed && unrecorded(in) {
		in.Created = PlanCreated(p)
	}
	return taskrec.Fold(in)
}

// unrecorded reports whether some row of tasks.md has no record: only
// then is the plan's creation needed.
func unrecorded(in taskrec.Input) bool {
	if in.Tasks == nil {
		return false
	}
	for _, t := range in.Tasks.Tasks {
		if _, ok := in.Records[domain.TaskID(t.ID)]; !ok {
			return true
		}
	}
	return false
}

// PlanCreated is when the plan began: the time of its log's first event
// (read alone), or else when tasks.md was last written, or now. A task
// never moved counts as pending since then.
func PlanCreated(p *store.Plan) time.Time {
	if r, err := p.Store.Root().OpenRead(store.Rel(p.ID, events.FileName)); err == nil {
		line, _ := bufio.NewReaderSize(r, 4096).ReadSlice('\n')
		r.Close()
		var first struct{ TS time.Time }
		if json.Unmarshal(line, &first) == nil && !first.TS.IsZero() {
			return first.TS.UTC()
		}
	}
	if fi, err := p.Store.Root().Stat(store.Rel(p.ID, "tasks.md")); err == nil {
		return fi.ModTime().UTC().Truncate(time.Second)
	}
	return p.Store.Now()
}
