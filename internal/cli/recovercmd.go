package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/continuity"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/history"
	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
)

// recoverOpts are the options of `taskie recover`.
type recoverOpts struct {
	s                   *Streams
	g                   *globals
	plan                string
	write, force, check bool
	asJSON              bool
}

// recoverCheckView is `taskie recover --check --json`: whether state.json
// agrees with the replay of the log, and the fields that differ.
type recoverCheckView struct {
	Plan       string `json:"plan"`
	Consistent bool   `json:"consistent"`
	HasState   bool   `json:"has_state"` // false: no state.json
	Events     int    `json:"events"`    // events replayed
	// Differences are the fields that differ, "field: replay → file";
	// empty when consistent or when state.json is missing.
	Differences []string `json:"differences"`
	// MissingNotes are progress entries the log records but no task
	// file (or archive) holds: a note cut short. They have no bearing on
	// Consistent, which is about state.json.
	MissingNotes []continuity.LoggedNote `json:"missing_notes,omitempty"`
}

// recoverView is `taskie recover --json` and `--write --json`: the
// rebuilt state, as done --json prints a plan's state, and whether it
// was written.
type recoverView struct {
	changedView
	Written bool `json:"written"`
}

func newRecoverCmd(s *Streams, g *globals) *cobra.Command { return newRecoverCmdWith(s, g, runRecover) }

func newRecoverCmdWith(s *Streams, g *globals, run func(*recoverOpts) error) *cobra.Command {
	o := &recoverOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "recover [plan]",
		Short: "Rebuild a missing or corrupt state.json from events.jsonl",
		Long: `Rebuild a plan's state.json by replaying its events.jsonl: phase changes
(phase, next_phase, phase_iteration, current_task), fields set with taskie set,
and finished reviews (consecutive_clean, review_model). The rebuilt file is
printed on stdout; a report of the events used and of what the log cannot
tell goes to stderr. Nothing is written without --write, and an existing
state.json that parses is only replaced with --force.

With --check, nothing is written, nor printed on stdout without --json: the
command exits 0 when state.json equals the replay of the log, and 1 with the
difference.

--json prints {"plan", "state", "written"} instead of the bare file (with
--write, the state written); with --check, {"plan", "consistent",
"has_state", "events", "differences"}, with the same exit codes.`,
		Example: "  taskie recover\n  taskie recover my-plan --write\n  taskie recover --check\n  taskie recover --check --json",
		Args:    maxArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			o.plan = firstArg(args)
			if o.force && !o.write {
				return usageErr(errors.New("--force only makes sense with --write"), "usage: taskie recover [plan] --write --force")
			}
			if o.check && o.write {
				return usageErr(errors.New("--check and --write cannot be used together"), "run `taskie recover --check` first, then `taskie recover --write`")
			}
			return run(o)
		},
	}
	c.Flags().BoolVar(&o.check, "check", false, "exit 0 when state.json equals the replay of events.jsonl, 1 with the difference")
	c.Flags().BoolVar(&o.write, "write", false, "write the rebuilt state.json (atomically, under the plan lock)")
	c.Flags().BoolVar(&o.force, "force", false, "with --write: replace a state.json that still parses")
	c.Flags().BoolVar(&o.asJSON, "json", false, "print the rebuilt state (with --check, the comparison) as JSON")
	return c
}

func runRecover(o *recoverOpts) error {
	p, err := o.g.openPlan(o.plan)
	if err != nil {
		return err
	}
	if o.check {
		return checkRecovered(o.s, p, o.asJSON)
	}
	return rebuildState(o.s, p, o.write, o.force, o.asJSON)
}

// rebuildState prints the state the log implies and, with write, saves it;
// with asJSON, the state is printed once, as JSON: the one written with
// write.
func rebuildState(s *Streams, p *store.Plan, write, force, asJSON bool) error {
	if !p.Exists(events.FileName) {
		return usageErr(fmt.Errorf("plan %s has no %s: nothing to rebuild state.json from", p.ID, events.FileName),
			"`taskie continue` suggests where the plan stands from its files")
	}
	cfg, err := implied.Config(p)
	if err != nil {
		return usageErr(err, "fix .taskie/config.json; `taskie config` shows the effective values")
	}
	rebuild := func(warn func(string)) (history.Result, error) {
		return replay(p, cfg.MaxReviews, cfg.Models, warn, nil)
	}
	res, err := rebuild(func(w string) { fmt.Fprintf(s.Err, "taskie: warning: %s\n", w) })
	if err != nil {
		return err
	}
	if !asJSON {
		if _, err := s.Out.Write(res.State.Encode()); err != nil {
			return err
		}
	}
	old, oldErr := p.State()
	reportRecover(s, p, cfg.MaxReviews, res, old, oldErr)
	if !write {
		fmt.Fprintf(s.Err, "nothing written: run `taskie recover%s --write` to save it as %s\n", planArg(p), state.Path(p.Dir))
		if asJSON {
			return writeJSON(s.Out, recoverView{changedView: changed(p.ID, res.State)})
		}
		return nil
	}
	written := res.State
	err = p.Update(func(snap *store.Snapshot) (store.Change, error) {
		// Again under the lock: another process may have written either file.
		if cur := snap.State; cur != nil && !force {
			return store.Change{}, usageErr(fmt.Errorf("%s exists and parses (phase %s): not replaced", state.Path(p.Dir), cur.Phase),
				"recover rebuilds a missing or corrupt state.json; to replace this one anyway, add --force")
		}
		res, err := rebuild(func(string) {}) // warned above
		if err != nil {
			return store.Change{}, err
		}
		written = res.State
		return store.Change{Actor: "cli", Reason: "rebuilt from the event log", Kind: events.Recovered, State: res.State, Replace: true}, nil
	})
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			return err
		}
		return usageErr(err, "")
	}
	fmt.Fprintf(s.Err, "wrote %s (`taskie validate` checks it)\n", state.Path(p.Dir))
	if asJSON {
		return writeJSON(s.Out, recoverView{changedView: changed(p.ID, written), Written: true})
	}
	return nil
}

// replay folds the plan's event log into the state it implies.
// also, when not nil, sees every event too.
func replay(p *store.Plan, maxReviews int, models []domain.Model, warn func(string), also func(*events.Lean)) (history.Result, error) {
	r := history.NewReplayer(history.Defaults{MaxReviews: &maxReviews, Models: models})
	err := scanPlanEvents(p, events.Filter{}, func(l *events.Lean) error {
		r.ApplyLean(l, warn)
		if also != nil {
			also(l)
		}
		return nil
	}, warn)
	return r.Result(), err
}

// loggedNote reads a PROGRESS event's entry.
func loggedNote(l *events.Lean) (continuity.LoggedNote, bool) {
	task, err := domain.ParseTaskID(l.Task)
	n, ok := events.MetaNumber(l.Meta, "session")
	if l.Event != events.Progress || err != nil || !ok || n < 1 {
		return continuity.LoggedNote{}, false
	}
	return continuity.LoggedNote{Task: task, Session: int(n), Did: events.MetaString(l.Meta, "did")}, true
}

// checkRecovered compares state.json with the replay of the log; with
// asJSON it also prints the comparison on stdout.
func checkRecovered(s *Streams, p *store.Plan, asJSON bool) error {
	cfg, err := implied.Config(p)
	if err != nil {
		return usageErr(err, "fix .taskie/config.json; `taskie config` shows the effective values")
	}
	var logged []continuity.LoggedNote
	res, err := replay(p, cfg.MaxReviews, cfg.Models, func(w string) { fmt.Fprintf(s.Err, "taskie: warning: %s\n", w) }, func(l *events.Lean) {
		if n, ok := loggedNote(l); ok {
			logged = append(logged, n)
		}
	})
	if err != nil {
		return err
	}
	missing, err := continuity.MissingNotes(p, logged)
	if err != nil {
		return err
	}
	cur, err := p.State()
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		return stateErr(p, err)
	}
	v := recoverCheckView{Plan: p.ID, HasState: cur != nil, Events: res.Events, Differences: []string{}}
	// done prints v when asJSON and returns the exit: problems unless
	// consistent.
	done := func() error {
		// Reported, not a failure: they have no bearing on state.json,
		// and the log keeps their text (a kill between a note's event and
		// its file is allowed).
		if len(missing) > 0 {
			v.MissingNotes = missing
			reportMissingNotes(s, p, missing)
		}
		if asJSON {
			if err := writeJSON(s.Out, v); err != nil {
				return err
			}
		}
		if v.Consistent {
			return nil
		}
		return errProblems
	}
	if cur == nil {
		if res.Events == 0 {
			fmt.Fprintf(s.Err, "plan %s: no state.json and no events: consistent\n", p.ID)
			v.Consistent = true
			return done()
		}
		fmt.Fprintf(s.Err, "plan %s: state.json is missing but %s implies one; `taskie recover%s --write` rebuilds it\n", p.ID, events.FileName, planArg(p))
		return done()
	}
	d := history.Diff(res.State, cur)
	if len(d) == 0 {
		fmt.Fprintf(s.Err, "plan %s: state.json equals the replay of %d event(s)\n", p.ID, res.Events)
		v.Consistent = true
		return done()
	}
	v.Differences = d
	fmt.Fprintf(s.Err, "plan %s: state.json differs from the replay of %s (replay → file):\n", p.ID, events.FileName)
	for _, l := range d {
		fmt.Fprintf(s.Err, "  %s\n", l)
	}
	fmt.Fprintf(s.Err, "state.json was changed outside taskie, or events are missing; the next taskie change records the file as found, and `taskie recover%s --write --force` rebuilds it from the log instead\n", planArg(p))
	return done()
}

// reportMissingNotes names the progress entries the task files lack; the
// log keeps their text.
func reportMissingNotes(s *Streams, p *store.Plan, missing []continuity.LoggedNote) {
	fmt.Fprintf(s.Err, "plan %s: note: %d progress entry(ies) of %s missing from the task files (a note cut short; the log keeps the text):\n",
		p.ID, len(missing), events.FileName)
	for _, n := range missing {
		fmt.Fprintf(s.Err, "  task %s, session %d: %s\n", n.Task, n.Session, clipOne(n.Did))
	}
	fmt.Fprintf(s.Err, "`taskie history T` shows them; add one back with `taskie task note T --did …`\n")
}

// clipOne is the first line of s, at most 100 runes.
func clipOne(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if r := []rune(s); len(r) > 100 {
		return string(r[:99]) + "…"
	}
	return s
}

// reportRecover says on stderr what the rebuilt state comes from and what
// it cannot contain.
func reportRecover(s *Streams, p *store.Plan, cfgMax int, res history.Result, old *state.State, oldErr error) {
	fmt.Fprintf(s.Err, "rebuilt from %d event(s) of %s\n", res.Events, events.Path(p.Dir))
	fmt.Fprintf(s.Err, "  used: %s\n", history.Counts(res.Used))
	if len(res.Skipped) > 0 {
		fmt.Fprintf(s.Err, "  no bearing on state.json: %s\n", history.Counts(res.Skipped))
	}
	for _, n := range res.Notes {
		fmt.Fprintf(s.Err, "  note: %s\n", n)
	}
	if res.Exact {
		fmt.Fprintf(s.Err, "  every change is in the log (each carries the state it set, pauses and resumes included)\n")
	} else {
		fmt.Fprintf(s.Err, "  not in this older log, left at their defaults: %s\n", strings.Join(history.NotLogged, "; "))
		fmt.Fprintf(s.Err, "  max_reviews starts at the configured default (%d); this log records it only when taskie set changes it\n", cfgMax)
	}
	switch {
	case errors.Is(oldErr, state.ErrNotFound):
		fmt.Fprintf(s.Err, "%s is missing\n", state.Path(p.Dir))
	case oldErr != nil:
		fmt.Fprintf(s.Err, "the current state.json cannot be read (%v): whatever it held beyond the log is lost\n", oldErr)
	default:
		d := history.Diff(old, res.State)
		if len(d) == 0 {
			fmt.Fprintf(s.Err, "the current %s parses and says the same\n", state.Path(p.Dir))
			break
		}
		fmt.Fprintf(s.Err, "the current %s parses and differs:\n", state.Path(p.Dir))
		for _, l := range d {
			fmt.Fprintf(s.Err, "  %s\n", l)
		}
	}
}

// planArg is " <id>" when the project has several plans.
func planArg(p *store.Plan) string {
	if p.PlanFlag() == "" {
		return ""
	}
	return " " + p.ID
}
