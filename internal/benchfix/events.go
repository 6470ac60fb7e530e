package benchfix

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/lifecycle"
)

// EventsStart is when the generated logs begin.
var EventsStart = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// EventsPlan writes a project at root with one plan "log" whose
// events.jsonl holds n realistic events (the query benchmarks of docs/performance.md):
// tasks implemented one after another, each started (a commit and its
// lifecycle moves), with progress notes, a code-review loop of two to six
// reviews (REVIEW_STARTED, REVIEW_FINISHED with cost and duration, the
// hook's commit, the lifecycle moves, the post-review's commit), now and
// then three failures escalating to the CTO and a retry, and the passed
// cycle approving, committing and completing the task. Commit events carry
// their state.json change like the store writes them: the lifecycle
// records the commit changed (the whole field at its first commit). The last tasks are left
// in progress, some over their timeouts. tasks.md lists every task; it
// returns the plan directory and the number of tasks.
func EventsPlan(root string, n int) (string, int, error) {
	dir := filepath.Join(root, ".taskie", "plans", "log")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", 0, err
	}
	f, err := os.Create(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		return "", 0, err
	}
	g := newGen(f, n)
	err = g.run()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", 0, err
	}
	var tb strings.Builder
	tb.WriteString("| Id | Status | Title |\n|----|--------|-------|\n")
	for i := 1; i <= g.task; i++ {
		st := "done"
		if t, ok := g.records[domain.TaskID(i)]; ok && t.State != lifecycle.Completed {
			st = "in-progress"
		}
		fmt.Fprintf(&tb, "| %d | %s | Task number %d |\n", i, st, i)
	}
	write := func(name, text string) error { return os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644) }
	if err := write("tasks.md", tb.String()); err != nil {
		return "", 0, err
	}
	if err := write("plan.md", "# A long plan\n"); err != nil {
		return "", 0, err
	}
	state := fmt.Sprintf(`{"max_reviews": 8, "current_task": "%d", "phase": "next-task", "phase_iteration": 0, "next_phase": null, "review_model": "opus", "consecutive_clean": 0, "tdd": false}`, g.task)
	return dir, g.task, write("state.json", state+"\n")
}

// gen writes the events.
type gen struct {
	w       *bufio.Writer
	rng     *rand.Rand
	n, done int
	now     time.Time
	task    int
	records map[domain.TaskID]lifecycle.Task
	// dirty holds the tasks moved since the last commit event, whose
	// records that commit logs; logged is whether a commit logged the
	// lifecycle field yet (the first logs it whole).
	dirty  map[domain.TaskID]bool
	logged bool
	sha    int
	err    error
}

func newGen(f *os.File, n int) *gen {
	return &gen{w: bufio.NewWriterSize(f, 1<<20), rng: rand.New(rand.NewPCG(16, 11)), n: n, now: EventsStart,
		records: map[domain.TaskID]lifecycle.Task{}, dirty: map[domain.TaskID]bool{}}
}

// event is one line as the store writes it (field order of events.Event).
type event struct {
	TS     string         `json:"ts"`
	Plan   string         `json:"plan"`
	Task   string         `json:"task,omitempty"`
	Event  string         `json:"event"`
	From   string         `json:"from,omitempty"`
	To     string         `json:"to,omitempty"`
	Actor  string         `json:"actor,omitempty"`
	Reason string         `json:"reason,omitempty"`
	Meta   map[string]any `json:"meta,omitempty"`
	Set    map[string]any `json:"set,omitempty"`
	// Lifecycle is the lifecycle records the commit changed.
	Lifecycle map[string]json.RawMessage `json:"lifecycle,omitempty"`
	Tasks     map[string]string          `json:"tasks,omitempty"`
	SHA       string                     `json:"sha,omitempty"`
	Prev      string                     `json:"prev,omitempty"`
	TSHA      string                     `json:"tsha,omitempty"`
	TPrev     string                     `json:"tprev,omitempty"`
}

func (g *gen) emit(e event) {
	if g.err != nil || g.done >= g.n {
		return
	}
	e.TS, e.Plan = g.now.Format(time.RFC3339), "log"
	b, err := json.Marshal(e)
	if err != nil {
		g.err = err
		return
	}
	b = append(b, '\n')
	_, g.err = g.w.Write(b)
	g.done++
}

// tick advances the clock by 10 s to max.
func (g *gen) tick(max time.Duration) {
	g.now = g.now.Add(10*time.Second + time.Duration(g.rng.Int64N(int64(max))))
}

func (g *gen) run() error {
	for g.done < g.n && g.err == nil {
		g.task++
		g.taskLife(domain.TaskID(g.task))
	}
	if g.err != nil {
		return g.err
	}
	return g.w.Flush()
}

// taskLife writes one task's events, from its start to its completion,
// unless the log ends first.
func (g *gen) taskLife(id domain.TaskID) {
	g.commit(id, "next-task", "code-review", 0, "start task")
	g.feed(id, lifecycle.TaskStarted)
	g.progress(id)
	reviews := 2 + g.rng.IntN(5)
	escalate := g.rng.IntN(10) == 0
	clean := 0
	for it := 1; clean < 2 && g.done < g.n; it++ {
		g.tick(20 * time.Minute)
		model := []string{"opus", "sonnet"}[(it-1)%2]
		run := events.ReviewRun{Review: "code-review", Iteration: it, Model: model}
		g.emit(event{Task: id.String(), Event: events.ReviewStarted, Actor: "hook", Meta: events.Meta(events.ReviewStartedMeta{ReviewRun: run, Reviewer: "claude"})})
		g.tick(8 * time.Minute)
		verdict := "FAIL"
		if (!escalate || it > 3) && (it >= reviews-1 || g.rng.IntN(3) == 0) {
			verdict, clean = "PASS", clean+1
		} else {
			clean = 0
		}
		wrote := true
		fin := events.ReviewFinishedMeta{ReviewRun: run, Verdict: verdict, ReviewCost: events.ReviewCost{
			CostUSD: float64(g.rng.IntN(90)+10) / 100, DurationMS: int64(30000 + g.rng.IntN(400000)),
			ReviewerSession: fmt.Sprintf("%08x-4e1f-9a3b-%012x", g.rng.Uint32(), g.rng.Uint64()&0xffffffffffff)},
			ReviewFile: fmt.Sprintf("task-%d-review-%d.md", id, it), WroteFile: &wrote}
		g.emit(event{Task: id.String(), Event: events.ReviewFinished, Actor: "hook", Meta: events.Meta(fin)})
		g.feed(id, lifecycle.ReviewStarted)
		if verdict == "FAIL" {
			g.feed(id, lifecycle.ReviewFailed)
		}
		if t := g.records[id]; t.State == lifecycle.CTOIntervention {
			g.recover(id)
		}
		if clean == 2 {
			g.feed(id, lifecycle.ReviewPassed)
			g.commit(id, "code-review", "complete-task", it, "hook: code-review PASS")
			g.tick(15 * time.Minute)
			g.feed(id, lifecycle.CommitSeen)
			return
		}
		g.commit(id, "code-review", "post-code-review", it, "hook: code-review "+verdict)
		g.tick(30 * time.Minute)
		g.progress(id)
		g.commit(id, "post-code-review", "code-review", it, "post-code-review done")
	}
}

// recover has the CTO retry a task it was escalated.
func (g *gen) recover(id domain.TaskID) {
	g.tick(time.Hour)
	t, effs, err := lifecycle.Retry(g.records[id], lifecycle.ActorCTO, "retry with a smaller change", g.now)
	if err != nil {
		g.err = err
		return
	}
	g.records[id] = t
	g.effects(effs)
}

func (g *gen) feed(id domain.TaskID, ev lifecycle.PhaseEvent) {
	effs, errs := lifecycle.Feed(g.records, []lifecycle.Cue{{Task: id, Event: ev}}, lifecycle.ActorHook, g.now)
	if len(errs) > 0 && !lifecycle.Refused(errs[0]) {
		g.err = errs[0]
	}
	g.effects(effs)
}

func (g *gen) effects(effs []lifecycle.Effect) {
	for _, e := range effs {
		g.dirty[e.Task] = true
		ev := event{TS: e.At.Format(time.RFC3339), Task: e.Task.String(), Event: string(e.Kind), From: string(e.From), To: string(e.To),
			Actor: string(e.Actor), Reason: e.Reason}
		if m := e.Meta.Map(); len(m) > 0 {
			ev.Meta = m
		}
		g.emit(ev)
	}
}

// commit writes a commit event with its state.json change as the store
// writes it: the lifecycle field whole the first time, then the records
// of the tasks moved since the last commit.
func (g *gen) commit(id domain.TaskID, phase, next string, it int, reason string) {
	g.tick(5 * time.Minute)
	set := map[string]any{"phase": phase, "next_phase": next, "phase_iteration": it, "current_task": id.String()}
	var changed map[string]json.RawMessage
	switch {
	case !g.logged && len(g.records) > 0:
		set["lifecycle"] = json.RawMessage(lifecycle.Encode(g.records))
		g.logged = true
	case len(g.dirty) > 0:
		changed = map[string]json.RawMessage{}
		for id := range g.dirty {
			changed[id.String()] = lifecycle.EncodeTask(g.records[id])
		}
	}
	clear(g.dirty)
	prev := fmt.Sprintf("%016x", g.sha)
	g.sha++
	e := event{Task: id.String(), Event: events.PhaseChange, From: "post-code-review", To: phase, Actor: "hook", Reason: reason,
		Set: set, Lifecycle: changed, SHA: fmt.Sprintf("%016x", g.sha), Prev: prev}
	if next == "complete-task" {
		e.Tasks = map[string]string{id.String(): "done"}
		e.TSHA, e.TPrev = fmt.Sprintf("%016x", g.sha*7), fmt.Sprintf("%016x", g.sha*5)
	}
	g.emit(e)
}

func (g *gen) progress(id domain.TaskID) {
	g.tick(40 * time.Minute)
	did := []string{"wrote the parser and its table tests", "fixed the review's findings on error handling",
		"split the command into options, run function and output", "added the streaming writer and a benchmark"}[g.rng.IntN(4)]
	g.emit(event{Task: id.String(), Event: events.Progress, Actor: "cli", Reason: "session: " + did,
		Meta: events.Meta(events.ProgressMeta{Did: did, Issues: "none", Next: "the next unchecked criterion", Session: g.rng.IntN(5) + 1})})
}
