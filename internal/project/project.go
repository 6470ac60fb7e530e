// Package project is the I/O shell shared by the CLI and the hook: it finds
// the project and its plans, loads state, gathers the facts the pure
// workflow needs, and records state changes together with their events.
package project

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/config"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// Plan is one plan directory of a project.
type Plan struct {
	Repo *plan.Repo
	ID   string
	Dir  string
	// ReviewLockHeld is set by the hook while it holds the review lock: its
	// own changes may start a new cycle during its review.
	ReviewLockHeld bool
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

// Get returns plan id, or the most recently modified plan when id is "".
func Get(r *plan.Repo, id string) (*Plan, error) {
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
	return &Plan{Repo: r, ID: id, Dir: dir}, nil
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
	if ids, _ := p.Repo.Plans(); len(ids) > 1 {
		return " --plan " + p.ID
	}
	return ""
}

// Config loads the project's configuration.
func (p *Plan) Config() (config.Config, error) { return config.Load(p.Repo.TaskieDir()) }

// Models returns the review model rotation, the default when config fails.
func (p *Plan) Models() []string {
	c, err := p.Config()
	if err != nil {
		return workflow.DefaultModels
	}
	return c.Models
}

// State loads state.json. An unknown phase or next_phase is a field error:
// commands refuse to act on (and rewrite) a state they do not understand.
func (p *Plan) State() (*state.State, error) {
	s, err := state.Load(p.Dir)
	if err != nil {
		return nil, err
	}
	if !workflow.IsPhase(s.Phase) {
		return nil, &state.FieldError{Path: state.Path(p.Dir), Field: "phase", Msg: fmt.Sprintf("unknown phase %q; phases are %s", s.Phase, strings.Join(workflow.Phases, ", "))}
	}
	if n := s.Next(); n != "" && !workflow.IsNextPhase(n) {
		return nil, &state.FieldError{Path: state.Path(p.Dir), Field: "next_phase", Msg: fmt.Sprintf("unknown next_phase %q", n)}
	}
	return s, nil
}

// ErrMoved is returned by Swap when state.json changed since it was read.
var ErrMoved = errors.New("state.json changed meanwhile")

// Swap replaces the state old (as read earlier, outside the lock) by next,
// unless someone changed state.json in between: compare-and-swap under the
// plan lock, so slow work (a review) never overwrites a newer update.
func (p *Plan) Swap(old, next *state.State, actor, reason string, extra ...events.Event) error {
	want := old.Encode()
	_, _, err := p.Change(actor, reason, false, func(cur *state.State) (*state.State, error) {
		if !bytes.Equal(cur.Encode(), want) {
			return nil, ErrMoved
		}
		return next, nil
	}, extra...)
	return err
}

// Path joins a file name to the plan directory.
func (p *Plan) Path(name string) string { return filepath.Join(p.Dir, name) }

// Exists reports whether a plan file exists.
func (p *Plan) Exists(name string) bool {
	_, err := os.Stat(p.Path(name))
	return err == nil
}

// Tasks parses tasks.md; nil tasks (and no error) when it does not exist.
func (p *Plan) Tasks() (*plan.Tasks, []plan.Problem, error) {
	data, err := os.ReadFile(p.Path("tasks.md"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	ts, probs := plan.ParseTasks(data)
	return ts, probs, nil
}

// TaskID checks a user-given task id against tasks.md and returns it
// canonical; the error names the task and the known ids.
func (p *Plan) TaskID(s string) (string, error) {
	ts, _, err := p.Tasks()
	if err != nil {
		return "", err
	}
	var ids []string
	if ts != nil {
		for _, k := range ts.IDs() {
			ids = append(ids, strconv.Itoa(k))
		}
	}
	id, err := plan.ParseTaskID(s)
	if err != nil {
		return "", fmt.Errorf("%v; known tasks: %s", err, listOrNone(ids))
	}
	if ts == nil {
		return "", fmt.Errorf("task %d: plan %s has no tasks.md yet", id, p.ID)
	}
	if _, ok := ts.Find(id); !ok {
		return "", fmt.Errorf("unknown task %d in plan %s; known tasks: %s", id, p.ID, listOrNone(ids))
	}
	return strconv.Itoa(id), nil
}

// CheckState is validation rule 8: state.json parses and its values are legal.
func CheckState(data []byte) []string {
	s, err := state.Decode(state.FileName, data)
	var se *state.SyntaxError
	var fe *state.FieldError
	switch {
	case errors.As(err, &se):
		return []string{fmt.Sprintf("malformed JSON at line %d, column %d: %s", se.Line, se.Col, se.Msg)}
	case errors.As(err, &fe):
		return []string{fmt.Sprintf("field %q: %s", fe.Field, fe.Msg)}
	case err != nil:
		return []string{err.Error()}
	}
	return workflow.Check(s)
}

// Validate runs every §7 rule on the plan.
func (p *Plan) Validate() []plan.Violation { return plan.Validate(p.Dir, CheckState) }

// Change updates state.json under the plan lock and appends a PHASE_CHANGE
// event when phase or next_phase moved, plus any extra events, under the
// same lock. create allows a plan without state.json.
func (p *Plan) Change(actor, reason string, create bool, fn func(*state.State) (*state.State, error), extra ...events.Event) (old, cur *state.State, err error) {
	err = state.WithLock(p.Dir, func() error {
		old, err = p.State()
		if errors.Is(err, state.ErrNotFound) && create {
			old, err = state.New(), nil
		}
		if err != nil {
			return err
		}
		if cur, err = fn(old); err != nil {
			return err
		}
		var archived []events.Event
		if startsCycle(old, cur) {
			if !p.ReviewLockHeld && state.ReviewRunning(p.Dir) {
				return fmt.Errorf("a review of plan %s is running; starting a new review cycle now would move its files: try again when it finishes", p.ID)
			}
			task, _ := strconv.Atoi(cur.Task())
			if cur.Next() != workflow.CodeReview {
				task = 0
			}
			ev, err := p.archiveSeries(cur.Next(), task, time.Now())
			if err != nil {
				return fmt.Errorf("archiving the earlier %s files: %w", cur.Next(), err)
			}
			if ev != nil {
				archived = append(archived, *ev)
			}
		}
		if err := state.Save(p.Dir, cur); err != nil {
			return err
		}
		evs := append(append(archived, PhaseEvents(p.ID, actor, reason, old, cur)...), extra...)
		for i := range evs {
			evs[i].Plan = p.ID
		}
		if err := events.Append(p.Dir, evs...); err != nil {
			return &EventsError{Err: err}
		}
		return nil
	})
	return old, cur, err
}

// EventsError reports that state.json was saved but its events could not be
// appended: the change happened; only its history line is missing.
type EventsError struct{ Err error }

func (e *EventsError) Error() string {
	return fmt.Sprintf("state.json was updated, but appending to %s failed: %v", events.FileName, e.Err)
}

func (e *EventsError) Unwrap() error { return e.Err }

// PhaseEvents returns the PHASE_CHANGE event between two states, if any.
func PhaseEvents(planID, actor, reason string, old, cur *state.State) []events.Event {
	if old.Phase == cur.Phase && old.Next() == cur.Next() && old.Task() == cur.Task() {
		return nil
	}
	return []events.Event{{Plan: planID, Task: cur.Task(), Event: events.PhaseChange,
		From: old.Phase, To: cur.Phase, Actor: actor, Reason: reason,
		Meta: map[string]any{"next_phase": cur.NextPhase, "phase_iteration": cur.PhaseIteration}}}
}
