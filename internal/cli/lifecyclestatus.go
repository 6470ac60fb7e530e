package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/clock"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/history"
	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/taskrec"
	"golang.org/x/term"
)

// processClock reads TASKIE_NOW once, where a process starts (Run, and
// HookStop for the Stop hook's fast path). A value that is no RFC 3339
// time is an error, except for a hook, which never fails on its
// environment: it warns on w and keeps the real clock.
func processClock(w io.Writer, hook bool) (clock.Clock, error) {
	c, err := clock.FromEnv(os.Getenv)
	if err != nil && hook {
		fmt.Fprintf(w, "taskie: warning: %v; the real clock is used\n", err)
		return clock.Real(), nil
	}
	return c, err
}

// lifecycleTimeouts returns the configured lifecycle timeouts.
func lifecycleTimeouts(p *store.Plan) (lifecycle.Timeouts, error) {
	cfg, err := implied.Config(p)
	if err != nil {
		return nil, usageErr(err, "fix .taskie/config.json; `taskie config` shows the effective values")
	}
	t, err := lifecycle.ParseTimeouts(cfg.LifecycleTimeouts)
	if err != nil {
		return nil, usageErr(err, "fix lifecycle_timeouts in .taskie/config.json")
	}
	return t, nil
}

// warnTimeouts warns when lifecycle_timeouts (or the configuration) does
// not read: status then measures against the default timeouts, and says
// so rather than hide that the configured ones are ignored.
func warnTimeouts(s *Streams, p *store.Plan) {
	cfg, err := implied.Config(p)
	if err == nil {
		_, err = lifecycle.ParseTimeouts(cfg.LifecycleTimeouts)
	}
	if err != nil {
		fmt.Fprintf(s.Err, "taskie: warning: %s; the timeouts shown are the defaults until .taskie/config.json is fixed\n",
			strings.ReplaceAll(err.Error(), "\n", "; "))
	}
}

// lifecycleAlert is a task at 80 % of its state's timeout or more.
type lifecycleAlert struct {
	Task    string `json:"task"`
	State   string `json:"state"`
	Level   string `json:"level"` // warning, alert, escalate
	Since   string `json:"since"`
	Elapsed string `json:"elapsed"`
	Limit   string `json:"timeout"`
	Percent int    `json:"percent"`
}

// lifecycleAlerts lists the tasks at 80 % of their timeout or more, by
// id, from their one record (planRecords: a task in committing whose
// commit is there completed, a task never moved pending since the plan
// began, a queued one not timed). It reads state.json only (not the log),
// so status stays fast — with a shared store, the lifecycle events of
// every clone in the database instead. A plan without state.json has no
// lifecycle to time.
func lifecycleAlerts(p *store.Plan, recs []taskrec.Record) []lifecycleAlert {
	if _, err := p.State(); err != nil {
		return nil
	}
	recs = slices.Clone(recs)
	slices.SortFunc(recs, func(a, b taskrec.Record) int { return int(a.ID - b.ID) })
	var out []lifecycleAlert
	for _, r := range recs {
		ts := r.Timeout
		if ts.Level < lifecycle.LevelWarning {
			continue
		}
		out = append(out, lifecycleAlert{Task: r.ID.String(), State: string(r.State), Level: ts.Level.String(),
			Since: r.ReadySince.UTC().Format(time.RFC3339), Elapsed: domain.ShortDuration(ts.Elapsed), Limit: domain.ShortDuration(ts.Limit),
			Percent: percentOf(ts.Elapsed, ts.Limit)})
	}
	return out
}

// printLifecycleAlerts writes one status line per task near or over its
// timeout. Tasks in the same state since the same time at the same level
// — typically the tasks never started, pending since the plan began —
// share one line when there are more than two, so a long plan's status
// stays short (--json lists each).
func printLifecycleAlerts(w io.Writer, alerts []lifecycleAlert) {
	for i := 0; i < len(alerts); {
		a := alerts[i]
		j := i + 1
		for j < len(alerts) && sameAlert(alerts[j], a) {
			j++
		}
		ids := make([]string, 0, j-i)
		for _, b := range alerts[i:j] {
			ids = append(ids, b.Task)
		}
		i = j
		if len(ids) < 3 {
			for _, id := range ids {
				a.Task = id
				printLifecycleAlert(w, "task "+id, a, "`taskie task escalate "+id+"`")
			}
			continue
		}
		shown := ids
		if len(ids) > 6 {
			shown = append(ids[:5:5], "…")
		}
		printLifecycleAlert(w, fmt.Sprintf("tasks %s (%d)", strings.Join(shown, ", "), len(ids)), a, "`taskie task escalate <task>`")
	}
}

// sameAlert reports whether two alerts differ only in their task.
func sameAlert(a, b lifecycleAlert) bool {
	a.Task = b.Task
	return a == b
}

func printLifecycleAlert(w io.Writer, who string, a lifecycleAlert, escalate string) {
	what := a.Level
	switch a.Level {
	case "alert":
		what = "alert: over its timeout"
	case "escalate":
		what = "escalate: consider " + escalate
	}
	fmt.Fprintf(w, "timeout: %s %s for %s of %s, %s (%s)\n", who, a.State, a.Elapsed, a.Limit, percentText(a.Percent), what)
}

// maxPercent caps the percentage of a timeout: a state held for years
// is far over it, and elapsed × 100 would overflow a duration.
const maxPercent = 1_000_000

// percentOf is elapsed as a percentage of limit (> 0), capped at
// maxPercent.
func percentOf(elapsed, limit time.Duration) int {
	return int(min(float64(elapsed)/float64(limit)*100, maxPercent))
}

// percentText shows a percentage; beyond 999 % the figure says nothing
// more than "far over".
func percentText(p int) string {
	if p > 999 {
		return ">999%"
	}
	return fmt.Sprintf("%d%%", p)
}

// sortedTasks returns the records by id.
func sortedTasks(tasks map[domain.TaskID]lifecycle.Task) []lifecycle.Task {
	out := make([]lifecycle.Task, 0, len(tasks))
	for _, t := range tasks {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b lifecycle.Task) int { return int(a.ID - b.ID) })
	return out
}

// lifecycleRule is the validation rule number of the lifecycle invariants.
const lifecycleRule = 10

// lifecycleViolations checks the lifecycle (validation rule 10, warnings):
// every record of state.json against the invariants (lifecycle.Check),
// every lifecycle event of the log as it is folded (lifecycle.Log: a move
// out of a terminal state, a fourth failure, a skipped state …), and the
// records of state.json against the replay of the log.
func lifecycleViolations(s *Streams, p *store.Plan) []plan.Violation {
	var out []plan.Violation
	warn := func(file string, line int, msg string) {
		out = append(out, plan.Violation{Rule: lifecycleRule, File: file, Line: line, Severity: plan.SeverityWarning, Msg: msg})
	}
	var recorded map[domain.TaskID]lifecycle.Task // nil: no state.json to compare
	if st, err := p.State(); err == nil {
		if recorded, err = taskrec.Records(st); err != nil {
			warn("state.json", 0, err.Error())
		}
		for _, t := range sortedTasks(recorded) {
			for _, v := range lifecycle.Check(t) {
				warn("state.json", 0, "lifecycle: "+v.String())
			}
		}
	}
	fold := history.NewLifecycle()
	err := scanPlanEvents(p, events.Filter{Kinds: history.LifecycleKinds()}, func(l *events.Lean) error {
		fold.Add(l)
		return nil
	}, func(msg string) { fmt.Fprintf(s.Err, "taskie: warning: %s\n", msg) })
	if err != nil {
		warn("events.jsonl", 0, "cannot read the log: "+err.Error())
		return out
	}
	vs, more := fold.Violations()
	for _, v := range vs {
		line := v.Pos
		v.Pos = -1 // the line says where
		warn("events.jsonl", line, "lifecycle: "+v.String())
	}
	if more > 0 {
		warn("events.jsonl", 0, fmt.Sprintf("lifecycle: … and %d more", more))
	}
	if recorded != nil {
		for _, id := range differing(recorded, fold.Tasks()) {
			warn("state.json", 0, fmt.Sprintf("lifecycle: task %s's record differs from the replay of events.jsonl (edited by hand?)", id))
		}
	}
	return out
}

// differing lists the tasks whose records differ between state.json and
// the log's replay, by id.
func differing(a, b map[domain.TaskID]lifecycle.Task) []domain.TaskID {
	var out []domain.TaskID
	for id, t := range a {
		u, ok := b[id]
		if !ok || string(lifecycle.Encode(map[domain.TaskID]lifecycle.Task{id: t})) != string(lifecycle.Encode(map[domain.TaskID]lifecycle.Task{id: u})) {
			out = append(out, id)
		}
	}
	for id := range b {
		if _, ok := a[id]; !ok {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// scanPlanEvents streams the plan's events, read lean, through fn; a
// missing log is no events.
func scanPlanEvents(p *store.Plan, f events.Filter, fn func(*events.Lean) error, warn func(string)) error {
	rel := store.Rel(p.ID, events.FileName)
	r, err := p.Store.Root().OpenRead(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer r.Close()
	return events.ScanLean(r, p.Store.Root().Path(rel), f, fn, warn)
}

// cloneMissing counts the clone's plan events that the shared store does
// not hold, compared by event key as `taskie store import` adds them.
func cloneMissing(ctx context.Context, p *store.Plan, log store.PlanLog, key store.PlanKey) (int, error) {
	lines, err := p.Store.PlanLines(p.ID)
	if err != nil || len(lines) == 0 {
		return 0, err
	}
	missing, err := log.MissingPlanKeys(ctx, key, store.PlanKeys(lines))
	return len(missing), err
}

// importProgress shows, on a terminal, how the import of a clone's events
// on its first use of the shared store goes, and says when it is done.
func importProgress(planID string, done, total int) {
	if inHook.Load() {
		return // a hook's stderr is the agent's block reason
	}
	tty := term.IsTerminal(int(os.Stderr.Fd()))
	switch {
	case done < total && tty:
		fmt.Fprintf(os.Stderr, "\rplan %s: adding this clone's events to the shared store: %d/%d", planID, done, total)
	case done >= total:
		if tty && total > 1000 { // progress was shown on this line
			fmt.Fprint(os.Stderr, "\r\033[K")
		}
		fmt.Fprintf(os.Stderr, "plan %s: this clone's %d events that the shared store lacked were added to it (its first use here)\n", planID, total)
	}
}

// sharedHold is a task's lifecycle record as the shared store holds it:
// folded from every clone's events, the record every clone decides a move
// of the task from. Without a shared store it holds nothing, and moves
// decide from the clone's state.json as before.
type sharedHold struct {
	shared  bool
	exists  bool // the store has a record of the task
	rec     lifecycle.Task
	release func()
}

func (h *sharedHold) close() {
	if h.release != nil {
		h.release()
		h.release = nil
	}
}

// holdShared reads task's shared record. With lock, the clone first adds
// to the store the events of its own the store lacks (its first use: the
// record must hide nothing this clone did), then takes the plan's lock in
// the store, held until close: the moves of one plan take turns across
// clones, each reading the record, deciding and appending its events
// before the next reads. A database that cannot be reached is warned
// about, and the move decides from the clone's own records (its events
// reach the store with `taskie store import` later).
func holdShared(w io.Writer, p *store.Plan, task domain.TaskID, lock bool) *sharedHold {
	h := &sharedHold{}
	if dbURL(p) == "" {
		return h
	}
	ctx := context.Background()
	warn := func(err error) {
		fmt.Fprintf(w, "taskie: warning: plan %s: the shared store cannot be read (%v); task %s is decided from this clone's records\n", p.ID, err, task)
	}
	c, log, key, ok, err := sharedLog(ctx, p)
	if err != nil || !ok {
		if err != nil {
			warn(err)
		}
		return h
	}
	h.release = func() { c.Close() }
	if lock {
		lines, err := p.Store.PlanLines(p.ID)
		if err == nil {
			_, err = store.ImportMissing(ctx, log, key, lines, func(done, total int) { importProgress(p.ID, done, total) })
		}
		if err != nil {
			warn(err)
			h.close()
			return h
		}
		if l, ok := c.(store.PlanLocker); ok {
			unlock, err := l.LockPlan(ctx, key)
			if err != nil {
				warn(err)
				h.close()
				return h
			}
			h.release = func() { unlock(); c.Close() }
		}
	}
	fold := history.NewLifecycle()
	var l events.Lean
	err = log.ScanLog(ctx, key, store.LogQuery{Task: task.String(), Kinds: history.LifecycleKinds()}, func(line []byte) error {
		if events.ParseLean(line, &l) == nil {
			fold.Add(&l)
		}
		return nil
	})
	if err != nil {
		warn(err)
		h.close()
		return h
	}
	h.shared = true
	h.rec, h.exists = fold.Tasks()[task]
	return h
}

// withShared is st with task's lifecycle record replaced by the shared
// one (removed when the store has none: the task starts in pending);
// st itself when there is no shared record or the records do not decode.
func (h *sharedHold) withShared(st *state.State, task domain.TaskID) *state.State {
	if !h.shared || st == nil {
		return st
	}
	recs, err := taskrec.Records(st)
	if err != nil {
		return st
	}
	if recs == nil {
		recs = map[domain.TaskID]lifecycle.Task{}
	}
	if h.exists {
		recs[task] = h.rec
	} else {
		delete(recs, task)
	}
	n := st.Clone()
	n.Lifecycle = lifecycle.Encode(recs)
	return n
}

// decided is the state.json a move decided on the shared record writes to
// the clone: the clone's own, with task's record as decided. The other
// tasks' records stay the clone's, so that its events.jsonl remains the
// record of its state.json (`taskie recover`).
func decided(orig, next *state.State, task domain.TaskID) *state.State {
	got, err := taskrec.Records(next)
	if err != nil {
		return next
	}
	recs, err := taskrec.Records(orig)
	if err != nil {
		return next
	}
	if recs == nil {
		recs = map[domain.TaskID]lifecycle.Task{}
	}
	if t, ok := got[task]; ok {
		recs[task] = t
	} else {
		delete(recs, task)
	}
	n := next.Clone()
	n.Lifecycle = lifecycle.Encode(recs)
	return n
}

// updateTask commits a lifecycle move of task that fn decides on a
// snapshot under the plan lock. With a shared store fn decides from the
// task's shared record (holdShared), under the store's plan lock, and the
// clone's files are written from that decision: every clone decides from
// the same record. Without one it is p.Update.
func updateTask(s *Streams, p *store.Plan, task domain.TaskID, fn func(*store.Snapshot) (store.Change, error)) error {
	h := holdShared(s.Err, p, task, true)
	defer h.close()
	if !h.shared {
		return p.Update(fn)
	}
	return p.Update(func(snap *store.Snapshot) (store.Change, error) {
		orig := snap.State
		snap.State = h.withShared(orig, task)
		c, err := fn(snap)
		snap.State = orig // what follows the decision sees the clone's files
		if err == nil && orig != nil && c.State != nil {
			c.State = decided(orig, c.State, task)
		}
		return c, err
	})
}
