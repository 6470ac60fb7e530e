// Package project is the handle the CLI and the hook hold on one plan: it
// finds the project and its plans and reads the plan once, through the
// plan store, for the whole command. Every write goes through the store.
package project

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/taskie-dev/taskie/internal/clock"
	"github.com/taskie-dev/taskie/internal/config"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// Plan is one plan directory of a project.
type Plan struct {
	Repo  *plan.Repo
	ID    string
	Dir   string
	Store *store.Files

	snap *store.Snapshot
	mu   sync.Mutex // guards snap: commands are single-threaded, tests are not
}

// ErrNoPlans is returned when the project has no plan yet.
var ErrNoPlans = errors.New("no plans yet: create one with `taskie plan new <id>`")

// Open finds the project that holds cwd.
func Open(cwd string) (*plan.Repo, error) {
	r, err := plan.Find(cwd)
	if errors.Is(err, plan.ErrNoTaskie) {
		return nil, fmt.Errorf("%s: no .taskie/plans here or above", cwd)
	}
	return r, err
}

// Get returns plan id, or the most recently modified plan when id is "";
// its store stamps events with now.
func Get(r *plan.Repo, id string, now clock.Clock) (*Plan, error) {
	if id == "" {
		var err error
		if id, err = r.MostRecent(); err != nil {
			return nil, err
		}
		if id == "" {
			return nil, ErrNoPlans
		}
	}
	dir, err := r.PlanDir(id)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		ids, _ := r.Plans()
		return nil, fmt.Errorf("plan %q not found; plans: %s", id, listOrNone(ids))
	}
	fs, err := store.Open(r, now)
	if err != nil {
		return nil, err
	}
	return &Plan{Repo: r, ID: id, Dir: dir, Store: fs}, nil
}

// With returns plan id of the store's repository.
func With(fs *store.Files, id string) (*Plan, error) {
	dir, err := fs.PlanDir(id)
	if err != nil {
		return nil, err
	}
	return &Plan{Repo: fs.Repo, ID: id, Dir: dir, Store: fs}, nil
}

func listOrNone(xs []string) string {
	if len(xs) == 0 {
		return "(none)"
	}
	return strings.Join(xs, ", ")
}

// PlanFlag is " --plan <id>" when the project has several plans, for the
// commands taskie prints: without it they would act on the most recent plan.
func (p *Plan) PlanFlag() string {
	ids, _ := p.Repo.Plans()
	return PlanFlagFor(p.ID, len(ids))
}

// PlanFlagFor is PlanFlag when the number of plans is known already.
func PlanFlagFor(id string, plans int) string {
	if plans > 1 {
		return " --plan " + id
	}
	return ""
}

// Config loads the project's configuration.
func (p *Plan) Config() (config.Config, error) { return config.Load(p.Repo.TaskieDir()) }

// Models returns the review model rotation, the default when config fails.
func (p *Plan) Models() []domain.Model {
	c, err := p.Config()
	if err != nil {
		return domain.DefaultModels()
	}
	return c.Models
}

// Snapshot returns the plan as read once for this command; after a
// commit, the plan as written.
func (p *Plan) Snapshot() (*store.Snapshot, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.snap == nil {
		s, err := p.Store.Load(p.ID)
		if err != nil {
			return nil, err
		}
		// A hand edit that moved the task or phase starts the counters now,
		// so every decision of this command sees them started.
		p.snap = withHandEdit(s, p.handEdit(s))
	}
	return p.snap, nil
}

// Reload forgets the snapshot so the next read sees the files again.
func (p *Plan) Reload() { p.setSnap(nil) }

func (p *Plan) setSnap(s *store.Snapshot) {
	p.mu.Lock()
	p.snap = s
	p.mu.Unlock()
}

// State returns the snapshot's state.json. An unknown phase or next_phase
// is a field error: commands refuse to act on (and rewrite) a state they
// do not understand.
func (p *Plan) State() (*state.State, error) {
	s, err := p.Snapshot()
	if err != nil {
		return nil, err
	}
	return s.State, s.StateErr
}

// Tasks returns the snapshot's tasks.md; nil tasks (and no error) when it
// does not exist.
func (p *Plan) Tasks() (*plan.Tasks, []plan.Problem, error) {
	s, err := p.Snapshot()
	if err != nil {
		return nil, nil, err
	}
	if s.Tasks == nil && s.TasksErr != nil && !errors.Is(s.TasksErr, os.ErrNotExist) {
		return nil, nil, s.TasksErr
	}
	return s.Tasks, s.TaskProblems, nil
}

// TaskID parses a user-given task id and checks it against tasks.md; the
// error names the task and the known ids.
func (p *Plan) TaskID(arg string) (domain.TaskID, error) {
	s, err := p.Snapshot()
	if err != nil {
		return 0, err
	}
	return s.TaskID(arg)
}

// Path joins a file name to the plan directory.
func (p *Plan) Path(name string) string { return p.Dir + string(os.PathSeparator) + name }

// Exists reports whether a regular plan file exists.
func (p *Plan) Exists(name string) bool {
	s, err := p.Snapshot()
	return err == nil && s.Exists(name)
}

// Validate runs every validation rule on the plan.
func (p *Plan) Validate() []plan.Violation {
	s, err := p.Snapshot()
	if err != nil {
		return []plan.Violation{{Rule: 1, File: "plan.md", Severity: plan.SeverityError, Msg: err.Error()}}
	}
	return s.Validate(workflow.Lint)
}

// RouteFacts gathers what `taskie continue` needs; s may be nil.
func (p *Plan) RouteFacts(st *state.State) workflow.RouteFacts {
	s, err := p.Snapshot()
	if err != nil {
		return workflow.RouteFacts{State: st}
	}
	return RouteFacts(s, st)
}

// RouteFacts gathers from a snapshot what `taskie continue` needs; st may
// be nil. The shell gathers it: the store only reads.
func RouteFacts(s *store.Snapshot, st *state.State) workflow.RouteFacts {
	f := workflow.RouteFacts{
		State:        st,
		HasPlan:      s.Exists("plan.md"),
		HasTasks:     s.Tasks != nil,
		ReviewExists: s.ReviewExists,
		PostExists:   s.PostExists,
		Latest:       s.Latest,
	}
	if s.Tasks != nil {
		f.Tasks = make([]workflow.TaskFact, len(s.Tasks.Tasks))
		for i, t := range s.Tasks.Tasks {
			f.Tasks[i] = workflow.TaskFact{ID: domain.TaskID(t.ID), Status: t.StatusNorm()}
		}
	}
	if st != nil {
		f.Subtasks = s.Subtasks(st.Task())
	}
	return f
}

// Update commits the change fn makes on a snapshot read under the plan
// lock, with the lifecycle moves its phases make (follow); afterwards the
// plan's snapshot is the written one.
func (p *Plan) Update(fn func(*store.Snapshot) (store.Change, error)) error {
	s, err := p.Store.Update(p.ID, func(snap *store.Snapshot) (store.Change, error) {
		he := p.handEdit(snap)
		c, err := fn(withHandEdit(snap, he))
		if err != nil {
			return c, err
		}
		c = handEditChange(he, snap.State, c)
		return p.imply(snap, p.progress(snap, p.follow(snap, c))), nil
	})
	if err != nil {
		return err
	}
	p.setSnap(s)
	return nil
}

// Commit applies a change made on snapshot s, unless the plan moved since
// (store.ErrMoved): compare-and-swap, so slow work such as a review never
// overwrites a newer update. The lifecycle follows the phases as in Update.
func (p *Plan) Commit(s *store.Snapshot, c store.Change) error {
	c = p.progress(s, p.follow(s, c))
	n, err := p.Store.Update(p.ID, func(cur *store.Snapshot) (store.Change, error) {
		if cur.Version != s.Version {
			return store.Change{}, store.ErrMoved
		}
		// What the change implies is worked out on the plan as the lock
		// finds it: review files may have come since s was read.
		return p.imply(cur, handEditChange(p.handEdit(cur), cur.State, c)), nil
	})
	if err != nil {
		return err
	}
	p.setSnap(n)
	return nil
}

// Change updates state.json with fn under the plan lock, with any extra
// events. create allows a plan without state.json.
func (p *Plan) Change(actor, reason string, create bool, fn func(*state.State) (*state.State, error), extra ...events.Event) (old, cur *state.State, err error) {
	err = p.Update(func(s *store.Snapshot) (store.Change, error) {
		old = s.State
		if old == nil {
			if !create || !errors.Is(s.StateErr, state.ErrNotFound) {
				return store.Change{}, s.StateErr
			}
			old = state.New()
		}
		if cur, err = fn(old); err != nil {
			return store.Change{}, err
		}
		return store.Change{Actor: actor, Reason: reason, State: cur, Create: create, Events: extra}, nil
	})
	return old, cur, err
}

// imply adds to a change, on the snapshot read under the plan lock, what
// it implies beyond what its command wrote: the review cycle it opens and
// the earlier cycle's files that move aside, and the OWNER_CHANGED event
// when another session takes the plan. The workflow decides both; the
// store writes them.
func (p *Plan) imply(s *store.Snapshot, c store.Change) store.Change {
	if c.State == nil {
		return c
	}
	old := s.State
	if c.Replace {
		old = nil
	}
	next := c.State
	if workflow.StartsCycle(old, next) {
		c.NewCycle = true
		c.Archive = workflow.CycleArchive(p.ID, next, s.SeriesFiles(next.Next(), next.Task()), p.Store.Now())
	}
	if c.Kind != events.OwnerChanged {
		if e := workflow.OwnerChange(old, next, c.Actor); e != nil {
			c.Events = append(slices.Clone(c.Events), *e)
		}
	}
	return c
}
