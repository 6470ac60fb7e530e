package history

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/internal/clock"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/events/eventstest"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// sim drives the real workflow functions and commits their states through
// the real plan store, so that a replay of the log the store wrote can be
// compared with the state.json it wrote.
type sim struct {
	t      *testing.T
	st     *store.Files
	root   string
	s      *state.State
	models []domain.Model
}

const simPlan = "p"

// newStore opens the store of a fresh repository with one plan, p, that
// has no state.json yet.
func newStore(t *testing.T) (*store.Files, string) {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, ".taskie", "plans", simPlan)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plan.md"), []byte("# p\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := plan.Find(root)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(r, clock.Real())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, root
}

func newSim(t *testing.T, auto, tdd bool) *sim {
	st, root := newStore(t)
	m := &sim{t: t, st: st, root: root, s: state.New(), models: domain.DefaultModels()}
	n := state.New()
	n.TDD = tdd
	if auto {
		n.NextPhase, n.PhaseIteration = state.Opt(domain.PlanReview), state.Int(0)
	}
	m.commit("plan created", n, events.Event{Event: events.PlanCreated, Meta: map[string]any{"tdd": tdd, "auto": auto}})
	return m
}

func (m *sim) commit(reason string, n *state.State, extra ...events.Event) {
	m.t.Helper()
	if _, err := m.st.Update(simPlan, func(*store.Snapshot) (store.Change, error) {
		return store.Change{Actor: "cli", Reason: reason, State: n, Create: true, Events: extra}, nil
	}); err != nil {
		m.t.Fatalf("%s: %v", reason, err)
	}
	m.s = n
	checkReplay(m.t, m.root, reason, m.s)
}

// checkReplay replays the plan's log and compares the result with
// state.json as written, and with want when it is not nil.
func checkReplay(t *testing.T, root, after string, want *state.State) Result {
	t.Helper()
	dir := filepath.Join(root, ".taskie", "plans", simPlan)
	evs, warns, err := eventstest.Read(dir)
	if err != nil || len(warns) > 0 {
		t.Fatalf("after %q: reading the log: %v %v", after, err, warns)
	}
	raw, err := os.ReadFile(filepath.Join(dir, state.FileName))
	if err != nil {
		t.Fatal(err)
	}
	disk, err := state.Decode(state.FileName, raw)
	if err != nil {
		t.Fatal(err)
	}
	got := Replay(evs, Defaults{Models: domain.DefaultModels()})
	if d := Diff(disk, got.State); len(d) > 0 {
		t.Fatalf("after %q the replay differs from state.json: %s\nnotes: %v", after, strings.Join(d, "; "), got.Notes)
	}
	if !bytes.Equal(got.State.Encode(), raw) {
		t.Errorf("after %q the replay encodes as\n%s\nbut state.json is\n%s", after, got.State.Encode(), raw)
	}
	if want != nil {
		if d := Diff(want, got.State); len(d) > 0 {
			t.Fatalf("after %q the replay differs from the workflow's state: %s", after, strings.Join(d, "; "))
		}
	}
	if len(got.Notes) > 0 {
		t.Errorf("after %q the replay has notes: %v", after, got.Notes)
	}
	return got
}

func (m *sim) done(phase domain.Phase) {
	m.t.Helper()
	n, err := workflow.Record(m.s, phase, false, m.models)
	if err != nil {
		m.t.Fatal(err)
	}
	m.commit(string(phase)+" done", n)
}

func (m *sim) start(task domain.TaskID) {
	m.t.Helper()
	n, err := workflow.Start(m.s, task, true, m.models)
	if err != nil {
		m.t.Fatal(err)
	}
	m.commit("start "+task.String(), n)
}

func (m *sim) set(field, value string) {
	m.t.Helper()
	n, err := workflow.Set(m.s, field, value)
	if err != nil {
		m.t.Fatal(err)
	}
	m.commit("set "+field, n, events.Event{Event: events.FieldSet, Meta: map[string]any{"field": field, "value": value}})
}

func (m *sim) review(verdict domain.Verdict, pendingOther bool) {
	m.t.Helper()
	d := workflow.StopDecision{Action: workflow.RunReview, Review: m.s.Next(), Task: m.s.Task(), Iteration: m.s.Iteration() + 1, Model: m.s.ReviewModel}
	n := workflow.AfterReview(m.s, d, workflow.Finished{Verdict: verdict}, pendingOther, m.models, false, "").Save
	m.commit("hook: "+string(d.Review)+" "+string(verdict), n,
		events.Event{Event: events.ReviewStarted, Task: d.Task.String(), Meta: map[string]any{"review": d.Review, "iteration": d.Iteration, "model": d.Model}},
		events.Event{Event: events.ReviewFinished, Task: d.Task.String(), Meta: map[string]any{"review": d.Review, "iteration": d.Iteration,
			"model": d.Model, "verdict": verdict, "cost_usd": 0.12, "duration_ms": 45000}})
}

// TestReplayWholePlan replays a plan through every review cycle and checks
// after each command that the replay equals the state the workflow made.
func TestReplayWholePlan(t *testing.T) {
	m := newSim(t, true, false)
	m.review(domain.Fail, true)
	m.done(domain.PostPlanReview)
	m.review(domain.Pass, true)
	m.done(domain.PostPlanReview)
	m.review(domain.Pass, true) // advance: create-tasks
	m.done(domain.CreateTasks)
	m.review(domain.Pass, true)
	m.done(domain.PostTasksReview)
	m.review(domain.Pass, true) // advance: complete-task
	m.start(1)
	m.review(domain.Fail, true)
	m.done(domain.PostCodeReview)
	m.review(domain.Pass, true)
	m.done(domain.PostCodeReview)
	m.review(domain.Pass, true) // advance: next task
	m.start(2)
	m.set("max_reviews", "12")
	m.review(domain.Pass, false)
	m.done(domain.PostCodeReview)
	m.review("", false) // unreadable verdict counts as not clean
	m.done(domain.PostCodeReview)
	m.review(domain.Pass, false)
	m.done(domain.PostCodeReview)
	m.review(domain.Pass, false) // advance to all-code-review: the cycle resets in the same commit
	m.review(domain.Pass, false)
	m.done(domain.PostAllCodeReview)
	m.review(domain.Pass, false) // advance: complete
	if m.s.Next() != domain.Complete {
		t.Fatalf("the simulated plan did not finish: %s", m.s.Encode())
	}
}

// TestReplayStoreLog replays a log the store wrote through changes that
// the phase events of older logs could not carry (unknown fields, pause,
// session_id, a recovery, a hand edit, tasks.md statuses): the replay
// rebuilds state.json exactly after each one.
func TestReplayStoreLog(t *testing.T) {
	st, root := newStore(t)
	if err := os.WriteFile(filepath.Join(root, ".taskie", "plans", simPlan, "tasks.md"),
		[]byte("| Id | Status |\n|---|---|\n| 1 | pending |\n| 2 | pending |\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	change := func(fn func(n *state.State)) func(*store.Snapshot) (store.Change, error) {
		return func(s *store.Snapshot) (store.Change, error) {
			base := s.State
			if base == nil {
				base = state.New()
			}
			n := base.Clone()
			fn(n)
			return store.Change{Actor: "cli", State: n, Create: true}, nil
		}
	}
	f := false
	steps := []struct {
		name string
		fn   func(*store.Snapshot) (store.Change, error)
		hand string // state.json written by hand before the step
	}{
		{name: "plan created", fn: func(s *store.Snapshot) (store.Change, error) {
			n := state.New()
			n.NextPhase, n.PhaseIteration, n.MaxReviews = state.Opt(domain.PlanReview), state.Int(0), 5
			return store.Change{Actor: "cli", State: n, Create: true, Events: []events.Event{{Event: events.PlanCreated}}}, nil
		}},
		{name: "plan-review FAIL", fn: change(func(n *state.State) {
			n.Phase, n.NextPhase, n.PhaseIteration, n.ReviewModel = domain.PlanReview, state.Opt(domain.PostPlanReview), state.Int(1), "sonnet"
		})},
		{name: "post-plan-review done", fn: change(func(n *state.State) {
			n.Phase, n.NextPhase = domain.PostPlanReview, state.Opt(domain.PlanReview)
		})},
		{name: "set an unknown field", fn: change(func(n *state.State) { n.Extra["colour"] = json.RawMessage(`{"name":"blue","rgb":[0,0,255]}`) })},
		{name: "change the unknown field", fn: change(func(n *state.State) { n.Extra["colour"] = json.RawMessage(`"red"`) })},
		{name: "pause", fn: change(func(n *state.State) { n.Enabled = &f })},
		{name: "session_id", fn: change(func(n *state.State) { n.SessionID = "sess-1" })},
		{name: "another session takes over", fn: change(func(n *state.State) { n.SessionID = "sess-2" })},
		{name: "resume (enabled unset)", fn: change(func(n *state.State) { n.Enabled = nil })},
		{name: "drop the unknown field and the owner", fn: change(func(n *state.State) { delete(n.Extra, "colour"); n.SessionID = "" })},
		{name: "tasks.md and state.json together", fn: func(s *store.Snapshot) (store.Change, error) {
			n := s.State.Clone()
			n.Phase, n.CurrentTask, n.NextPhase, n.PhaseIteration = domain.NextTask, state.Opt[domain.TaskID](1), state.Opt(domain.CodeReview), state.Int(0)
			return store.Change{Actor: "cli", State: n, Statuses: map[domain.TaskID]string{1: "in-progress"}}, nil
		}},
		{name: "tasks.md alone", fn: func(s *store.Snapshot) (store.Change, error) {
			return store.Change{Actor: "cli", Statuses: map[domain.TaskID]string{2: "blocked"}}, nil
		}},
		{name: "a hand edit, then a commit", hand: `{"phase":"next-task","current_task":1,"next_phase":"code-review","phase_iteration":0,"max_reviews":7,"x-note":"hand"}`,
			fn: change(func(n *state.State) { n.TDD = true })},
		{name: "recover replaces the whole file", fn: func(s *store.Snapshot) (store.Change, error) {
			n := state.New()
			n.Phase, n.NextPhase, n.CurrentTask, n.PhaseIteration = domain.CodeReview, state.Opt(domain.PostCodeReview), state.Opt[domain.TaskID](1), state.Int(2)
			n.Extra = map[string]json.RawMessage{"kept": json.RawMessage(`true`)}
			return store.Change{Actor: "cli", Kind: events.Recovered, Reason: "taskie recover", State: n, Replace: true}, nil
		}},
		{name: "recover over a malformed file", hand: `{"phase": "code-rev`, fn: func(s *store.Snapshot) (store.Change, error) {
			n := state.New()
			n.Phase, n.MaxReviews = domain.CodeReview, 3
			return store.Change{Actor: "cli", Kind: events.Recovered, State: n, Replace: true}, nil
		}},
		{name: "after the recovery", fn: change(func(n *state.State) { n.ReviewModel = "m-x" })},
	}
	for _, step := range steps {
		if step.hand != "" {
			if err := os.WriteFile(filepath.Join(root, ".taskie", "plans", simPlan, state.FileName), []byte(step.hand), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.Update(simPlan, step.fn); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		checkReplay(t, root, step.name, nil)
	}
	res := checkReplay(t, root, "the last step", nil)
	if res.Used[events.Checkpoint] != 1 || res.Used[events.Recovered] != 2 {
		t.Errorf("used = %v, want one checkpoint and two recoveries", res.Used)
	}
}

func ev(kind, task, from, to string, meta map[string]any) events.Event {
	return events.Event{TS: time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC), Plan: "p", Task: task, Event: kind, From: from, To: to, Meta: meta}
}

func phase(from, to, next string, it any) events.Event {
	var n any
	if next != "" {
		n = next
	}
	return ev(events.PhaseChange, "", from, to, map[string]any{"next_phase": n, "phase_iteration": it})
}

func TestReplayTable(t *testing.T) {
	fin := func(it float64, model, verdict string) events.Event {
		return ev(events.ReviewFinished, "", "", "", map[string]any{"review": "plan-review", "iteration": it, "model": model, "verdict": verdict})
	}
	tests := []struct {
		name  string
		evs   []events.Event
		want  map[string]string // field → compact JSON value
		notes []string          // substrings, one per note
	}{
		{name: "empty log is a fresh plan", want: map[string]string{"phase": `"new-plan"`, "next_phase": "null", "max_reviews": "8", "review_model": `"opus"`}},
		{
			name: "a review cycle counts clean verdicts and rotates models",
			evs: []events.Event{
				phase("new-plan", "new-plan", "plan-review", 0.0),
				phase("new-plan", "plan-review", "post-plan-review", 1.0), fin(1, "opus", "PASS"),
				phase("plan-review", "post-plan-review", "plan-review", 1.0),
				phase("post-plan-review", "plan-review", "post-plan-review", 2.0), fin(2, "sonnet", "FAIL"),
				phase("plan-review", "post-plan-review", "plan-review", 2.0),
				phase("post-plan-review", "plan-review", "post-plan-review", 3.0), fin(3, "opus", "PASS"),
			},
			want: map[string]string{"phase": `"plan-review"`, "next_phase": `"post-plan-review"`, "phase_iteration": "3", "consecutive_clean": "1", "review_model": `"sonnet"`},
		},
		{
			name: "a verdict the hook did not record is ignored",
			evs: []events.Event{
				phase("new-plan", "plan-review", "post-plan-review", 1.0), fin(1, "opus", "PASS"),
				ev(events.ReviewFinished, "", "", "", map[string]any{"iteration": 2.0, "model": "sonnet", "verdict": "PASS", "recorded": false}),
			},
			want: map[string]string{"consecutive_clean": "1", "review_model": `"sonnet"`, "phase_iteration": "1"},
		},
		{
			name: "FIELD_SET overrides what the phase changes said",
			evs: []events.Event{
				phase("new-plan", "new-plan", "plan-review", 0.0),
				ev(events.FieldSet, "", "", "", map[string]any{"field": "max_reviews", "value": "12"}),
				ev(events.FieldSet, "", "", "", map[string]any{"field": "max_reviews", "value": "3"}),
				ev(events.FieldSet, "", "", "", map[string]any{"field": "next_phase", "value": "null"}),
				ev(events.FieldSet, "", "", "", map[string]any{"field": "review_model", "value": "model-x"}),
				ev(events.FieldSet, "", "", "", map[string]any{"field": "tdd", "value": "true"}),
				ev(events.FieldSet, "", "", "", map[string]any{"field": "phase_iteration", "value": "5"}),
			},
			want: map[string]string{"max_reviews": "3", "next_phase": "null", "review_model": `"model-x"`, "tdd": "true", "phase_iteration": "5"},
		},
		{
			name: "a FIELD_SET that taskie set would refuse is ignored with a note",
			evs: []events.Event{
				ev(events.FieldSet, "", "", "", map[string]any{"field": "max_reviews", "value": "-1"}),
				ev(events.FieldSet, "", "", "", map[string]any{"field": "phase", "value": "complete"}),
				ev(events.FieldSet, "", "", "", map[string]any{"field": "colour", "value": "red"}),
			},
			want:  map[string]string{"max_reviews": "8", "phase": `"new-plan"`},
			notes: []string{"max_reviews = -1 ignored", `phase = complete ignored: cannot move from "new-plan"`, `cannot set "colour"`},
		},
		{
			name: "an unknown phase in an event is ignored with a note",
			evs: []events.Event{
				phase("new-plan", "new-plan", "plan-review", 0.0),
				phase("new-plan", "warp-drive", "plan-review", 0.0),
				phase("new-plan", "plan-review", "hyperspace", 1.0),
			},
			want:  map[string]string{"phase": `"new-plan"`, "next_phase": `"plan-review"`, "phase_iteration": "0"},
			notes: []string{`unknown phase "warp-drive"`, "unknown next_phase hyperspace"},
		},
		{
			name: "a task change resets the cycle but set current_task keeps the model",
			evs: []events.Event{
				{Event: events.PhaseChange, From: "new-plan", To: "next-task", Task: "1", Meta: map[string]any{"next_phase": "code-review", "phase_iteration": 0.0}},
				{Event: events.PhaseChange, From: "next-task", To: "code-review", Task: "1", Meta: map[string]any{"next_phase": "post-code-review", "phase_iteration": 1.0}},
				{Event: events.ReviewFinished, Task: "1", Meta: map[string]any{"iteration": 1.0, "model": "opus", "verdict": "PASS"}},
				{Event: events.PhaseChange, From: "code-review", To: "code-review", Task: "2", Reason: "set current_task", Meta: map[string]any{"next_phase": "post-code-review", "phase_iteration": 0.0}},
			},
			want: map[string]string{"current_task": `"2"`, "phase_iteration": "0", "consecutive_clean": "0", "review_model": `"sonnet"`},
		},
		{
			name: "a phase change naming no task id is ignored with a note",
			evs: []events.Event{
				{Event: events.PhaseChange, From: "new-plan", To: "next-task", Task: "1", Meta: map[string]any{"next_phase": "code-review", "phase_iteration": 0.0}},
				{Event: events.PhaseChange, From: "next-task", To: "next-task", Task: "two", Meta: map[string]any{"next_phase": "code-review", "phase_iteration": 0.0}},
			},
			want:  map[string]string{"current_task": `"1"`, "phase": `"next-task"`},
			notes: []string{`task id "two" is not a positive integer: event ignored`},
		},
		{
			name: "PLAN_CREATED gives tdd; a gap in the log is noted",
			evs: []events.Event{
				ev(events.PlanCreated, "", "", "", map[string]any{"tdd": true, "auto": false}),
				phase("create-tasks", "next-task-tdd", "", nil),
			},
			want:  map[string]string{"tdd": "true", "phase": `"next-task-tdd"`, "phase_iteration": "null"},
			notes: []string{`moves from "create-tasks" but the replayed phase is "new-plan"`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := Replay(tc.evs, Defaults{})
			got := fields(res.State)
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %s, want %s", k, got[k], v)
				}
			}
			if len(res.Notes) != len(tc.notes) {
				t.Fatalf("notes = %q, want %d notes like %q", res.Notes, len(tc.notes), tc.notes)
			}
			for i, n := range tc.notes {
				if !strings.Contains(res.Notes[i], n) {
					t.Errorf("note %d = %q, want it to contain %q", i, res.Notes[i], n)
				}
			}
			if res.Events != len(tc.evs) {
				t.Errorf("Events = %d, want %d", res.Events, len(tc.evs))
			}
			if p := workflow.Check(res.State); len(p) > 0 {
				t.Errorf("the rebuilt state does not validate: %v", p)
			}
		})
	}
}

func TestReplayDefaults(t *testing.T) {
	res := Replay(nil, Defaults{MaxReviews: state.Int(5), Models: []domain.Model{"a", "b", "c"}})
	if res.State.MaxReviews != 5 || res.State.ReviewModel != "a" {
		t.Fatalf("defaults not used: %s", res.State.Encode())
	}
	if res := Replay(nil, Defaults{MaxReviews: state.Int(0)}); res.State.MaxReviews != 0 {
		t.Fatalf("max_reviews 0 (reviews disabled) not kept: %d", res.State.MaxReviews)
	}
	res = Replay([]events.Event{{Event: events.ReviewFinished, Meta: map[string]any{"iteration": 1.0, "model": "c", "verdict": "PASS"}}}, Defaults{Models: []domain.Model{"a", "b", "c"}})
	if res.State.ReviewModel != "a" {
		t.Fatalf("review_model after c = %q, want a", res.State.ReviewModel)
	}
}

// TestReplayTornLastLine: a crash mid-append leaves a torn last line; the
// events before it replay and the line is reported as a warning.
func TestReplayTornLastLine(t *testing.T) {
	dir := t.TempDir()
	log := `{"ts":"2026-11-26T10:00:00Z","plan":"p","event":"PHASE_CHANGE","from":"new-plan","to":"new-plan","meta":{"next_phase":"plan-review","phase_iteration":0}}
{"ts":"2026-11-26T10:00:01Z","plan":"p","event":"FIELD_SET","meta":{"field":"max_reviews","value":"12"}}
{"ts":"2026-11-26T10:00:02Z","plan":"p","event":"PHASE_CHANGE","from":"new-plan","to":"plan-rev`
	if err := os.WriteFile(filepath.Join(dir, events.FileName), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	evs, warns, err := eventstest.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], ":3: skipped") {
		t.Fatalf("warnings = %q, want one for line 3", warns)
	}
	res := Replay(evs, Defaults{})
	if res.State.Phase != "new-plan" || res.State.Next() != "plan-review" || res.State.MaxReviews != 12 || res.Events != 2 {
		t.Fatalf("replay = %s (%d events)", res.State.Encode(), res.Events)
	}
	if res.Used[events.PhaseChange] != 1 || res.Used[events.FieldSet] != 1 {
		t.Fatalf("used = %v", res.Used)
	}
}

func TestReplayNotesCapped(t *testing.T) {
	var evs []events.Event
	for range maxNotes + 5 {
		evs = append(evs, phase("new-plan", "nowhere", "", nil))
	}
	res := Replay(evs, Defaults{})
	if len(res.Notes) != maxNotes+1 || res.Notes[maxNotes] != "… and 5 more" {
		t.Fatalf("notes: %d, last %q", len(res.Notes), res.Notes[len(res.Notes)-1])
	}
}

func TestDiff(t *testing.T) {
	a := state.New()
	b := a.Clone()
	b.Phase, b.MaxReviews = "plan-review", 3
	b.Extra["keep"] = json.RawMessage(`"me"`)
	got := strings.Join(Diff(a, b), "; ")
	want := `max_reviews: 8 → 3; phase: "new-plan" → "plan-review"; keep: (absent) → "me"`
	if got != want {
		t.Fatalf("Diff = %s\nwant   %s", got, want)
	}
	if d := Diff(a, a.Clone()); len(d) != 0 {
		t.Fatalf("Diff of equal states = %v", d)
	}
}

// genEvents returns n events like a long-running plan's log: review cycles
// with their phase changes, progress entries and an occasional FIELD_SET.
func genEvents(n int) []events.Event {
	out := make([]events.Event, 0, n)
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; len(out) < n; i++ {
		task := fmt.Sprint(i/4 + 1)
		it := float64(i%4 + 1)
		model := []string{"opus", "sonnet"}[i%2]
		ts = ts.Add(time.Minute)
		batch := []events.Event{
			{TS: ts, Plan: "p", Task: task, Event: events.PhaseChange, From: "post-code-review", To: "code-review", Actor: "hook", Reason: "hook: code-review PASS",
				Meta: map[string]any{"next_phase": "post-code-review", "phase_iteration": it}},
			{TS: ts, Plan: "p", Task: task, Event: events.ReviewStarted, Actor: "hook", Meta: map[string]any{"review": "code-review", "iteration": it, "model": model}},
			{TS: ts, Plan: "p", Task: task, Event: events.ReviewFinished, Actor: "hook",
				Meta: map[string]any{"review": "code-review", "iteration": it, "model": model, "verdict": "PASS", "cost_usd": 0.12, "duration_ms": 45000.0}},
			{TS: ts, Plan: "p", Task: task, Event: events.PhaseChange, From: "code-review", To: "post-code-review", Actor: "cli", Reason: "post-code-review done",
				Meta: map[string]any{"next_phase": "code-review", "phase_iteration": it}},
			{TS: ts, Plan: "p", Task: task, Event: events.Progress, Actor: "cli", Reason: "session 1: did things", Meta: map[string]any{"session": 1.0, "did": "did things"}},
		}
		if i%50 == 0 {
			batch = append(batch, events.Event{TS: ts, Plan: "p", Event: events.FieldSet, Actor: "cli", Meta: map[string]any{"field": "max_reviews", "value": "12"}})
		}
		out = append(out, batch...)
	}
	return out[:n]
}

// BenchmarkReplay replays 100,000 events held in memory (docs/performance.md: queries
// over 100,000 events < 300 ms).
func BenchmarkReplay(b *testing.B) {
	evs := genEvents(100_000)
	b.ReportAllocs()
	for b.Loop() {
		if res := Replay(evs, Defaults{}); res.Events != len(evs) {
			b.Fatal(res.Events)
		}
	}
}

// BenchmarkReplayFile is what `taskie recover` does: read 100,000 events
// from events.jsonl (eventstest.Scan) and replay them as they stream in.
func BenchmarkReplayFile(b *testing.B) {
	dir := b.TempDir()
	var log []byte
	for _, e := range genEvents(100_000) {
		line, err := json.Marshal(e)
		if err != nil {
			b.Fatal(err)
		}
		log = append(append(log, line...), '\n')
	}
	if err := os.WriteFile(events.Path(dir), log, 0o644); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		r := NewReplayer(Defaults{})
		if err := eventstest.Scan(dir, r.Apply, func(w string) { b.Fatal(w) }); err != nil {
			b.Fatal(err)
		}
		if r.Result().Events != 100_000 {
			b.Fatal(r.Result().Events)
		}
	}
}
