package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/history"
	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/taskrec"
)

// queryOpts are the options of `taskie query`.
type queryOpts struct {
	s         *Streams
	g         *globals
	state     string
	stuck     bool
	escalated bool
	failing   bool
	task      string
	metrics   bool
	asJSON    bool
	claimed   bool
	needsYou  bool
}

func newQueryCmd(s *Streams, g *globals) *cobra.Command { return newQueryCmdWith(s, g, runQuery) }

func newQueryCmdWith(s *Streams, g *globals, run func(*queryOpts) error) *cobra.Command {
	o := &queryOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "query [--state S] [--stuck] [--escalated] [--failing] [--task T] [--metrics]",
		Short: "List tasks by lifecycle state, timeout, escalation or failures, with time metrics",
		Long: `List the tasks of a plan by their lifecycle (taskie help lifecycle), as the event log
records it: the lifecycle events of events.jsonl are folded through the same
transition functions that made them (nothing else in the log is decoded).

  --state S     tasks in state S
  --stuck       tasks over their state's timeout (lifecycle_timeouts)
  --escalated   tasks in cto_intervention or human_escalation
  --failing     unfinished tasks with 2 or more failures in a state
  --task T      that task only

Selectors combine (all must hold); none lists every task. A task tasks.md
lists that was never moved has no record yet: it counts as pending since the
plan was created (its log's first event), unless tasks.md marks it done or
cancelled.
On a terminal, each line: task, state, since, time in state, the state's
timeout, the timeout level (ok, warning ≥ 80 %, alert ≥ 100 %, escalate
≥ 150 %), failures; --metrics shows time metrics instead: time in state,
total, time by state. Piped: a header of the --json keys, then every field
of a task tab-separated (durations in seconds).
--needs-you prints what needs a human instead, for every plan (or --plan's):
reason, since when and what clears it (docs/needs-you.md); piped, a header of
the JSON keys then tab-separated columns.
--json prints an array with every field (durations in seconds); --jq
filters it. TASKIE_NOW sets the clock.`,
		Example: "  taskie query --stuck\n  taskie query --state quality_review --json\n  taskie query --task 3 --metrics",
		Args:    exactArgs(0, "no arguments (use --task T)"),
		RunE:    func(*cobra.Command, []string) error { return run(o) },
	}
	f := c.Flags()
	f.StringVar(&o.state, "state", "", "tasks in this lifecycle `state`")
	f.BoolVar(&o.stuck, "stuck", false, "tasks over their state's timeout")
	f.BoolVar(&o.escalated, "escalated", false, "tasks in cto_intervention or human_escalation")
	f.BoolVar(&o.failing, "failing", false, "unfinished tasks with 2 or more failures in a state")
	f.StringVar(&o.task, "task", "", "only this `task`")
	f.BoolVar(&o.metrics, "metrics", false, "print time metrics: time in state, total, by state")
	f.BoolVar(&o.asJSON, "json", false, "print a JSON array")
	f.BoolVar(&o.claimed, "claimed", false, "list the claims instead: task, agent, lease expiry")
	f.BoolVar(&o.needsYou, "needs-you", false, "list what needs a human instead, across plans: reason, since, what clears it")
	return c
}

func runQuery(o *queryOpts) error {
	defer boundHeap()()
	s := o.s
	if o.needsYou {
		return queryNeeds(o)
	}
	p, err := o.g.openPlan("")
	if err != nil {
		return err
	}
	if o.claimed {
		return queryClaimed(s, p, o.asJSON)
	}
	q, err := o.query(p)
	if err != nil {
		return err
	}
	timeouts, err := lifecycleTimeouts(p)
	if err != nil {
		return err
	}
	fold, records, err := foldLifecycle(s, p, q)
	if err != nil {
		return err
	}
	now := s.Clock.Now()
	all := fold.Tasks()
	rs := implied.View(p, nil, taskrec.Input{Records: records})
	if q.MaySelectPending() {
		// Listed in tasks.md, never moved: pending since the plan began
		// (unless tasks.md marks it done or cancelled).
		for _, r := range rs {
			if r.Row && !r.Recorded && r.State == lifecycle.Pending && !fold.Known(r.ID) {
				all[r.ID] = r.Life
			}
		}
	}
	// A queued task's pending time counts from when it became ready.
	q.Ready = taskrec.ReadyAt(rs)
	return o.write(q.Select(all, now, timeouts), now, timeouts, q.Ready)
}

// foldLifecycle folds the lifecycle events of the log (of q's task, when
// it names one), with the completions state.json's records imply, and
// returns those records too (the finished ones included).
func foldLifecycle(s *Streams, p *store.Plan, q history.Query) (*history.Lifecycle, map[domain.TaskID]lifecycle.Task, error) {
	fold := history.NewLifecycle()
	if q.LiveOnly() {
		fold.ForgetFinished()
	}
	filter := events.Filter{Kinds: history.LifecycleKinds()}
	if q.Task != 0 {
		filter.Task = q.Task.String()
	}
	_, err := scanLog(p, filter, 0, func(l *events.Lean) error {
		fold.Add(l)
		return nil
	}, func(msg string) { fmt.Fprintf(s.Err, "taskie: warning: %s\n", msg) })
	if err != nil {
		return nil, nil, err
	}
	records := settleInMemory(p, fold, filter.Task)
	if vs, more := fold.Violations(); len(vs)+more > 0 {
		fmt.Fprintf(s.Err, "taskie: warning: %s: %d lifecycle event(s) break an invariant (first: line %d: %s); `taskie validate` lists them\n",
			events.FileName, len(vs)+more, vs[0].Pos, vs[0].Msg)
	}
	return fold, records, nil
}

// settleInMemory completes a task waiting in committing whose commit is
// there, in memory only: a read never writes, the next change records it.
// It returns state.json's records.
func settleInMemory(p *store.Plan, fold *history.Lifecycle, task string) map[domain.TaskID]lifecycle.Task {
	st, err := p.State()
	if err != nil {
		return nil
	}
	tasks, err := taskrec.Records(st)
	if err != nil || len(tasks) == 0 {
		return nil
	}
	for _, e := range implied.SettledView(p, tasks) {
		var l events.Lean
		if line, err := json.Marshal(e); err == nil && (task == "" || e.Task == task) && events.ParseLean(line, &l) == nil {
			fold.Add(&l)
		}
	}
	return tasks
}

// write prints the tasks selected, as JSON or a table.
func (o *queryOpts) write(tasks []lifecycle.Task, now time.Time, timeouts lifecycle.Timeouts, ready lifecycle.ReadyAt) error {
	s := o.s
	w := bufio.NewWriterSize(s.Out, 64<<10)
	var err error
	if o.asJSON {
		err = writeQueryJSON(w, tasks, now, timeouts, ready)
	} else {
		ws := *s
		ws.Out = w
		printQuery(&ws, tasks, now, timeouts, ready, o.metrics)
		if len(tasks) == 0 {
			fmt.Fprintln(s.Err, "no task matches")
		}
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
}

// writeQueryJSON writes the tasks as an indented JSON array, one view at a
// time (a long plan's views are never all held).
func writeQueryJSON(w io.Writer, tasks []lifecycle.Task, now time.Time, timeouts lifecycle.Timeouts, ready lifecycle.ReadyAt) error {
	if len(tasks) == 0 {
		_, err := io.WriteString(w, "[]\n")
		return err
	}
	for i, t := range tasks {
		b, err := json.MarshalIndent(newQueryView(t, now, timeouts, ready), "  ", "  ")
		if err != nil {
			return err
		}
		sep := ",\n  "
		if i == 0 {
			sep = "[\n  "
		}
		if _, err := fmt.Fprintf(w, "%s%s", sep, b); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, "\n]\n")
	return err
}

// query checks the selectors.
func (o *queryOpts) query(p *store.Plan) (history.Query, error) {
	q := history.Query{Stuck: o.stuck, Escalated: o.escalated, Failing: o.failing}
	if o.state != "" {
		st, err := lifecycle.ParseState(o.state)
		if err != nil {
			return q, usageErr(err, "")
		}
		q.State = st
	}
	if o.task != "" {
		id, err := taskArg(p, o.task)
		if err != nil {
			return q, usageErr(err, "")
		}
		q.Task = id
	}
	return q, nil
}

// queryView is one task as `taskie query --json` shows it.
type queryView struct {
	Task          string           `json:"task"`
	State         lifecycle.State  `json:"state"`
	Since         string           `json:"since"`
	Created       string           `json:"created"`
	InState       int64            `json:"in_state_s"`
	Timeout       int64            `json:"timeout_s"`        // 0: the state has none, or the task is queued
	Queued        bool             `json:"queued,omitempty"` // pending, not ready yet: no timeout runs
	Level         string           `json:"level"`
	Failures      map[string]int   `json:"failures"`
	CTOAttempts   int              `json:"cto_attempts"`
	EscalatedFrom lifecycle.State  `json:"escalated_from,omitempty"`
	Total         int64            `json:"total_s"`
	ByState       map[string]int64 `json:"by_state_s"`
}

func newQueryView(t lifecycle.Task, now time.Time, timeouts lifecycle.Timeouts, ready lifecycle.ReadyAt) queryView {
	st := ready.Status(t, now, timeouts)
	m := lifecycle.Metrics(t, now)
	v := queryView{Task: t.ID.String(), State: t.State, Since: t.Since.UTC().Format(time.RFC3339), Created: t.Created.UTC().Format(time.RFC3339),
		InState: seconds(m.InState), Timeout: seconds(st.Limit), Queued: st.Queued, Level: st.Level.String(), Failures: map[string]int{},
		CTOAttempts: t.CTOAttempts, EscalatedFrom: t.EscalatedFrom, Total: seconds(m.Total), ByState: map[string]int64{}}
	for s, n := range t.Failures {
		v.Failures[string(s)] = n
	}
	for s, d := range m.ByState {
		v.ByState[string(s)] = seconds(d)
	}
	return v
}

func seconds(d time.Duration) int64 { return int64(d / time.Second) }

// queryColumns are the --json keys of a task: the piped header.
var queryColumns = []string{"task", "state", "since", "created", "in_state_s", "timeout_s", "queued", "level",
	"failures", "cto_attempts", "escalated_from", "total_s", "by_state_s"}

// printQuery writes one line per task: piped, every --json key; on a
// terminal the lifecycle columns or, with metrics, the time metrics.
func printQuery(s *Streams, tasks []lifecycle.Task, now time.Time, timeouts lifecycle.Timeouts, ready lifecycle.ReadyAt, metrics bool) {
	t := table{cols: queryColumns, heads: []string{"TASK", "STATE", "SINCE", "IN STATE", "TIMEOUT", "LEVEL", "FAILURES"},
		paint: func(p palette, _, col int, cell string) string {
			if col == 5 && !metrics {
				switch cell {
				case "warning":
					return p.Yellow(cell)
				case "alert", "escalate":
					return p.Red(cell)
				}
			}
			return cell
		}}
	if metrics {
		t.heads = []string{"TASK", "STATE", "IN STATE", "TOTAL", "BY STATE"}
	}
	_ = t.print(s, len(tasks), func(i int, tty bool) []string {
		v := newQueryView(tasks[i], now, timeouts, ready)
		if tty {
			return queryCells(v, metrics)
		}
		return queryTSV(v)
	})
}

// queryTSV is a task's piped row: its --json values.
func queryTSV(v queryView) []string {
	var fails, by []string
	for _, s := range lifecycle.States() {
		if n := v.Failures[string(s)]; n > 0 {
			fails = append(fails, fmt.Sprintf("%s=%d", s, n))
		}
		if d, ok := v.ByState[string(s)]; ok {
			by = append(by, fmt.Sprintf("%s=%d", s, d))
		}
	}
	return []string{v.Task, string(v.State), v.Since, v.Created, strconv.FormatInt(v.InState, 10), strconv.FormatInt(v.Timeout, 10),
		strconv.FormatBool(v.Queued), v.Level, orNone(strings.Join(fails, " ")), strconv.Itoa(v.CTOAttempts), orNone(string(v.EscalatedFrom)),
		strconv.FormatInt(v.Total, 10), orNone(strings.Join(by, " "))}
}

// queryCells are one task's columns.
func queryCells(v queryView, metrics bool) []string {
	if metrics {
		return []string{v.Task, string(v.State), domain.ShortDuration(time.Duration(v.InState) * time.Second),
			domain.ShortDuration(time.Duration(v.Total) * time.Second), byState(v.ByState)}
	}
	limit := "-"
	switch {
	case v.Queued:
		limit = "queued"
	case v.Timeout > 0:
		limit = domain.ShortDuration(time.Duration(v.Timeout) * time.Second)
	}
	return []string{v.Task, string(v.State), v.Since, domain.ShortDuration(time.Duration(v.InState) * time.Second), limit, v.Level, failures(v)}
}

// byState renders time by state in machine order: "pending=0s in_progress=1h".
func byState(m map[string]int64) string {
	var parts []string
	for _, s := range lifecycle.States() {
		if d, ok := m[string(s)]; ok {
			parts = append(parts, string(s)+"="+domain.ShortDuration(time.Duration(d)*time.Second))
		}
	}
	return orNone(strings.Join(parts, " "))
}

// failures renders failure counts in machine order, and CTO attempts.
func failures(v queryView) string {
	var parts []string
	for _, s := range lifecycle.States() {
		if n := v.Failures[string(s)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", s, n))
		}
	}
	if v.CTOAttempts > 0 {
		parts = append(parts, fmt.Sprintf("cto_attempts=%d", v.CTOAttempts))
	}
	if v.EscalatedFrom != "" {
		parts = append(parts, "escalated_from="+string(v.EscalatedFrom))
	}
	return orNone(strings.Join(parts, " "))
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// boundHeap keeps a log reader's heap near what it holds: folding a
// million events keeps one record per task (tens of MB with 30,000 tasks),
// and Go's default would let the heap grow to twice that before
// collecting. A soft limit makes the collector work harder instead, so
// peak memory stays under 50 MB. It returns the restore.
func boundHeap() func() {
	old := debug.SetMemoryLimit(heapLimit)
	return func() { debug.SetMemoryLimit(old) }
}

// heapLimit is the soft memory limit of the log readers.
const heapLimit = 36 << 20

// queryNeeds is `taskie query --needs-you`: the needs-you list of every
// plan, or of --plan's.
func queryNeeds(o *queryOpts) error {
	r, err := o.g.repo()
	if err != nil {
		return err
	}
	var only *store.Plan
	if o.g.plan != "" {
		if only, err = o.g.openPlan(""); err != nil {
			return err
		}
	}
	items, err := needsOf(r, only, o.g.clock())
	if err != nil {
		return err
	}
	if o.asJSON {
		return writeJSON(o.s.Out, needsViews(items))
	}
	if len(items) == 0 {
		fmt.Fprintln(o.s.Err, "nothing needs you")
	}
	return printNeedsTable(o.s, items)
}
