package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/taskie-dev/taskie/internal/clock"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
)

// Plan is the handle a command or a hook holds on one plan directory: the
// plan read once for the whole command (Snapshot), and every write through
// Update or Commit, which hand the change to the plan's Implier before
// writing what it returns.
type Plan struct {
	Repo  *plan.Repo
	ID    string
	Dir   string
	Store *Files
	// Notes, when set, hears what a commit did beyond the plan (the
	// claims it released, Committer); nil says nothing.
	Notes io.Writer

	implier Implier
	snap    *Snapshot
	holding int        // Hold calls under way
	held    []Change   // written changes whose Committed waits for Hold's end
	mu      sync.Mutex // guards snap, holding and held: commands are single-threaded, tests are not
}

// Implier works out what a change implies beyond what its command wrote
// (the lifecycle following the phases, the progress of the waves, the
// review cycle it opens, the counters a hand edit started). The deciders
// answer it; the store may not import them, so the shell hands one over
// when it opens the plan. Nil writes every change as handed.
type Implier interface {
	// See returns snapshot s as the commands see it (a hand edit of
	// state.json shown with the counters it started); s itself when
	// nothing differs.
	See(p *Plan, s *Snapshot) *Snapshot
	// Imply returns change c, made under the plan lock on seen (See of
	// found, the plan as the lock found it), with what it implies.
	Imply(p *Plan, found, seen *Snapshot, c Change) Change
	// Follow returns change c, made on snapshot s outside the lock, with
	// what its moves imply (it may ask git); Commit calls it before the
	// lock and ImplyFollowed under it.
	Follow(p *Plan, s *Snapshot, c Change) Change
	// ImplyFollowed returns change c, already followed, with what it
	// implies on found, the plan as the lock found it.
	ImplyFollowed(p *Plan, found *Snapshot, c Change) Change
}

// Committer is an Implier that also acts, once a change is written, on
// what lives outside the plan's files: the claims of the tasks the change
// took out of the schedule (completed, abandoned, skipped, with a human)
// are released there, whichever path moved them. Every Update and Commit
// calls it, so no path can finish a task and leave its claim live.
type Committer interface {
	Committed(p *Plan, c Change)
}

// committed hands the written change c to the implier's Committer, or
// keeps it for the end of Hold.
func (p *Plan) committed(c Change) {
	cm, ok := p.implier.(Committer)
	if !ok {
		return
	}
	p.mu.Lock()
	if p.holding > 0 {
		p.held = append(p.held, c)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	cm.Committed(p, c)
}

// Hold runs fn, which writes the plan while holding the coordination
// store's lock (a fenced write), and hands its changes to the Committer
// only once fn returns: releasing a claim inside fn would wait on that
// same lock.
func (p *Plan) Hold(fn func() error) error {
	p.mu.Lock()
	p.holding++
	p.mu.Unlock()
	err := fn()
	p.mu.Lock()
	p.holding--
	var held []Change
	if p.holding == 0 {
		held, p.held = p.held, nil
	}
	p.mu.Unlock()
	for _, c := range held {
		p.committed(c)
	}
	return err
}

// ErrNoPlans is returned when the project has no plan yet.
var ErrNoPlans = errors.New("no plans yet: create one with `taskie plan new <id>`")

// OpenPlan returns plan id of repository r, or the most recently modified
// plan when id is ""; its store stamps events with now, and imp works out
// what its changes imply.
func OpenPlan(r *plan.Repo, id string, now clock.Clock, imp Implier) (*Plan, error) {
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
	fs, err := Open(r, now)
	if err != nil {
		return nil, err
	}
	return &Plan{Repo: r, ID: id, Dir: dir, Store: fs, implier: imp}, nil
}

// PlanOf returns plan id of the store's repository.
func PlanOf(fs *Files, id string, imp Implier) (*Plan, error) {
	dir, err := fs.PlanDir(id)
	if err != nil {
		return nil, err
	}
	return &Plan{Repo: fs.Repo, ID: id, Dir: dir, Store: fs, implier: imp}, nil
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

// Snapshot returns the plan as read once for this command; after a
// commit, the plan as written.
func (p *Plan) Snapshot() (*Snapshot, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.snap == nil {
		s, err := p.Store.Load(p.ID)
		if err != nil {
			return nil, err
		}
		// A hand edit that moved the task or phase starts the counters now,
		// so every decision of this command sees them started.
		p.snap = p.see(s)
	}
	return p.snap, nil
}

func (p *Plan) see(s *Snapshot) *Snapshot {
	if p.implier == nil {
		return s
	}
	return p.implier.See(p, s)
}

// Reload forgets the snapshot so the next read sees the files again.
func (p *Plan) Reload() { p.setSnap(nil) }

func (p *Plan) setSnap(s *Snapshot) {
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

// Update commits the change fn makes on a snapshot read under the plan
// lock, with what it implies (the Implier); afterwards the plan's
// snapshot is the written one.
func (p *Plan) Update(fn func(*Snapshot) (Change, error)) error {
	var made Change
	s, err := p.Store.Update(p.ID, func(found *Snapshot) (Change, error) {
		seen := p.see(found)
		c, err := fn(seen)
		if err != nil || p.implier == nil {
			return c, err
		}
		made = p.implier.Imply(p, found, seen, c)
		return made, nil
	})
	if err != nil {
		return err
	}
	p.setSnap(s)
	p.committed(made)
	return nil
}

// Commit applies a change made on snapshot s, unless the plan moved since
// (ErrMoved): compare-and-swap, so slow work such as a review never
// overwrites a newer update. What it implies is worked out as in Update.
func (p *Plan) Commit(s *Snapshot, c Change) error {
	if p.implier != nil {
		c = p.implier.Follow(p, s, c)
	}
	n, err := p.Store.Update(p.ID, func(cur *Snapshot) (Change, error) {
		if cur.Version != s.Version {
			return Change{}, ErrMoved
		}
		if p.implier == nil {
			return c, nil
		}
		// What the change implies is worked out on the plan as the lock
		// finds it: review files may have come since s was read.
		c = p.implier.ImplyFollowed(p, cur, c)
		return c, nil
	})
	if err != nil {
		return err
	}
	p.setSnap(n)
	p.committed(c)
	return nil
}

// Change updates state.json with fn under the plan lock, with any extra
// events. create allows a plan without state.json.
func (p *Plan) Change(actor, reason string, create bool, fn func(*state.State) (*state.State, error), extra ...events.Event) (old, cur *state.State, err error) {
	err = p.Update(func(s *Snapshot) (Change, error) {
		old = s.State
		if old == nil {
			if !create || !errors.Is(s.StateErr, state.ErrNotFound) {
				return Change{}, s.StateErr
			}
			old = state.New()
		}
		if cur, err = fn(old); err != nil {
			return Change{}, err
		}
		return Change{Actor: actor, Reason: reason, State: cur, Create: create, Events: extra}, nil
	})
	return old, cur, err
}
