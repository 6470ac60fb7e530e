// Package implied works out what a change to a plan implies beyond what
// its command wrote: the lifecycle following the plan's phases, the
// progress of the waves, the review cycle a change opens and the owner
// change, the counters a hand edit of state.json started. It is the shell
// between the store, which writes what it is handed and decides nothing,
// and the deciders (lifecycle, workflow, parallel): it gathers the facts
// they need (configuration, git's HEAD, the log's replay) and hands their
// answers to the store as part of the change.
package implied

import (
	"slices"

	"github.com/taskie-dev/taskie/internal/clock"
	"github.com/taskie-dev/taskie/internal/config"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/taskrec"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// Get returns plan id of repository r, or the most recently modified plan
// when id is ""; its store stamps events with now, and its changes carry
// what they imply.
func Get(r *plan.Repo, id string, now clock.Clock) (*store.Plan, error) {
	return store.OpenPlan(r, id, now, Implier{})
}

// With returns plan id of the store's repository, its changes carrying
// what they imply.
func With(fs *store.Files, id string) (*store.Plan, error) {
	return store.PlanOf(fs, id, Implier{})
}

// Implier is the store.Implier the commands and the hook open plans with.
type Implier struct{}

// See shows a hand edit of state.json with the counters it started.
func (Implier) See(p *store.Plan, s *store.Snapshot) *store.Snapshot {
	return withHandEdit(s, handEdit(p, s))
}

// Imply adds to change c, made on seen under the plan lock, the counters a
// hand edit started, the lifecycle moves and progress events it causes,
// the review cycle it opens and the owner change.
func (Implier) Imply(p *store.Plan, found, seen *store.Snapshot, c store.Change) store.Change {
	var he *workflow.HandEdit
	if seen != found {
		he = handEdit(p, found)
	}
	c = handEditChange(he, found.State, c)
	return imply(p, found, progress(p, found, follow(p, found, c)))
}

// Follow adds to change c, made on s, the lifecycle moves and progress
// events it causes.
func (Implier) Follow(p *store.Plan, s *store.Snapshot, c store.Change) store.Change {
	return progress(p, s, follow(p, s, c))
}

// ImplyFollowed adds to change c, already followed, the counters a hand
// edit of the plan as found started, the review cycle it opens and the
// owner change.
func (Implier) ImplyFollowed(p *store.Plan, found *store.Snapshot, c store.Change) store.Change {
	return imply(p, found, handEditChange(handEdit(p, found), found.State, c))
}

// Config loads the plan's project configuration.
func Config(p *store.Plan) (config.Config, error) { return config.Load(p.Repo.TaskieDir()) }

// Models returns the review model rotation, the default when config fails.
func Models(p *store.Plan) []domain.Model {
	c, err := Config(p)
	if err != nil {
		return domain.DefaultModels()
	}
	return c.Models
}

// Validate runs every validation rule on the plan.
func Validate(p *store.Plan) []plan.Violation {
	s, err := p.Snapshot()
	if err != nil {
		return []plan.Violation{{Rule: 1, File: "plan.md", Severity: plan.SeverityError, Msg: err.Error()}}
	}
	return s.Validate(workflow.Lint)
}

// PlanRouteFacts gathers what `taskie continue` needs; st may be nil.
func PlanRouteFacts(p *store.Plan, st *state.State) workflow.RouteFacts {
	s, err := p.Snapshot()
	if err != nil {
		return workflow.RouteFacts{State: st}
	}
	var reviews chan []plan.FileName
	if st != nil {
		// The series of a state are known before the tasks: in a big plan
		// the listing that finds their files (the kernel's walk of every
		// name) runs while the tasks are folded.
		reviews = make(chan []plan.FileName, 1)
		go func() { reviews <- s.ReviewFiles(routeSeries(st, nil)) }()
	}
	// Each task as every view shows it: a task whose commit is there is
	// done (in memory; the next change records it).
	return routeFactsWith(s, st, View(p, s, taskrec.Input{State: st, Untimed: true}), reviews)
}

// routeFactsWith is what `taskie continue` needs, with each task's one
// record, rs; the review files come from reviews when not nil (routeSeries
// of st, read ahead).
func routeFactsWith(s *store.Snapshot, st *state.State, rs []taskrec.Record, reviews chan []plan.FileName) workflow.RouteFacts {
	f := workflow.RouteFacts{
		State:    st,
		HasPlan:  s.Exists("plan.md"),
		HasTasks: s.Tasks != nil,
	}
	if s.Tasks != nil {
		// Each task's one status: its lifecycle state's rendering, the
		// Status cell for a task without a record.
		for _, r := range rs {
			if r.Row {
				f.Tasks = append(f.Tasks, workflow.TaskFact{ID: r.ID, Status: r.Display, Deps: r.Deps})
			}
		}
	}
	// The review files of the series the route can ask about, not every
	// file of the plan (60,000 in a plan of 10,000 tasks).
	if reviews != nil {
		f.Reviews = <-reviews
	} else {
		f.Reviews = s.ReviewFiles(routeSeries(st, f.Tasks))
	}
	if st != nil {
		f.Subtasks = s.Subtasks(st.Task())
	}
	return f
}

// routeSeries are the review series workflow.Continue looks at: with a
// state, the reviews of its phase and next phase (and the review a
// post-review phase belongs to), of its task; without one, the guess from
// the files: the plan, tasks and all-code reviews, and the code review of
// every task in progress.
func routeSeries(st *state.State, tasks []workflow.TaskFact) []store.Series {
	if st != nil {
		var out []store.Series
		for _, p := range []domain.Phase{st.Next(), st.Phase, domain.ReviewOf(st.Next()), domain.ReviewOf(st.Phase)} {
			out = append(out, store.Series{Review: p, Task: st.Task()})
		}
		return out
	}
	out := []store.Series{{Review: domain.PlanReview}, {Review: domain.TasksReview}, {Review: domain.AllCodeReview}}
	for _, t := range tasks {
		if t.Status == "in-progress" {
			out = append(out, store.Series{Review: domain.CodeReview, Task: t.ID})
		}
	}
	return out
}

// imply adds to a change, on the snapshot read under the plan lock, what
// it implies beyond what its command wrote: the review cycle it opens and
// the earlier cycle's files that move aside, and the OWNER_CHANGED event
// when another session takes the plan. The workflow decides both; the
// store writes them.
func imply(p *store.Plan, s *store.Snapshot, c store.Change) store.Change {
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
