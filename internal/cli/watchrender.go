package cli

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/taskie-dev/taskie/internal/clock"
	"github.com/taskie-dev/taskie/internal/config"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/history/ledgerlog"
	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/ledger"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/needs"
	"github.com/taskie-dev/taskie/internal/parallel"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/taskrec"
)

// This file gathers and draws what `taskie watch` shows: the needs-you
// list, then every plan with its tasks. It only reads.

// watchView is one screen of `taskie watch`.
type watchView struct {
	Needs []needs.Item
	Plans []watchPlan
}

// watchPlan is one plan's part of the screen.
type watchPlan struct {
	ID       string
	Err      string // why the plan could not be read; the rest is empty
	Phase    string // "code-review (next: …)"
	Task     domain.TaskID
	Paused   bool
	Done     int
	Total    int
	Reviews  int
	SpentUSD float64
	Tokens   int64
	Tasks    []watchTask
}

// watchTask is one row of a plan's table.
type watchTask struct {
	ID       domain.TaskID
	Title    string
	Status   string // tasks.md
	State    string // lifecycle
	Wave     int    // 0: none (done, or the waves cannot be planned)
	Agent    string // claim holder
	Lease    string // "claimed 5m ago, 25m left"
	Round    int    // last code-review iteration
	MaxRound int    // max_reviews, for the current task in review
	Open     map[domain.Severity]int
	CostUSD  float64
	Tokens   int64
}

// gatherWatch reads the screen: the needs-you list (as `taskie query
// --needs-you`) and each plan.
func gatherWatch(r *plan.Repo, clk clock.Clock) (*watchView, error) {
	items, err := needsOf(r, nil, clk)
	if err != nil {
		return nil, err
	}
	v := &watchView{Needs: items}
	ids, err := r.Plans()
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		p, err := implied.Get(r, id, clk)
		if err != nil {
			v.Plans = append(v.Plans, watchPlan{ID: id, Err: oneLine(err.Error())})
			continue
		}
		v.Plans = append(v.Plans, watchPlanOf(p))
	}
	return v, nil
}

// watchPlanOf reads one plan: its state, its tasks with their lifecycle
// records, waves and claims, and one pass over its log for the review
// rounds, the open findings and what the reviews cost.
func watchPlanOf(p *store.Plan) watchPlan {
	wp := watchPlan{ID: p.ID}
	ts, _, err := p.Tasks()
	if err != nil {
		wp.Err = oneLine(err.Error())
		return wp
	}
	st, _ := p.State() // a plan without state.json still shows its tasks
	if st != nil {
		wp.Phase = string(st.Phase)
		if n := st.Next(); n != "" {
			wp.Phase += " (next: " + string(n) + ")"
		}
		wp.Task, wp.Paused = st.Task(), !st.IsEnabled()
	}
	f := watchFacts{st: st, recs: planRecords(p, taskrec.Input{})}
	f.claims, f.now = claimsOf(p)
	f.waves = taskWaves(p)
	f.reader, f.costs = readReviews(p)
	if f.reader != nil {
		wp.Reviews, wp.SpentUSD = f.reader.Reviews, f.reader.SpentUSD
	}
	wp.Tokens = f.costs.tokens[0]
	for id, n := range f.costs.tokens {
		if id != 0 {
			wp.Tokens += n
		}
	}
	if ts == nil {
		return wp
	}
	for _, r := range f.recs {
		if !r.Row {
			continue // a record whose row was removed
		}
		wt := f.task(r)
		if wt.Status != plan.StatusCancelled {
			wp.Total++
			if wt.Status == plan.StatusDone {
				wp.Done++
			}
		}
		wp.Tasks = append(wp.Tasks, wt)
	}
	return wp
}

// watchFacts is what watch read of one plan.
type watchFacts struct {
	st     *state.State // nil without state.json
	recs   []taskrec.Record
	claims []parallel.Claim
	now    time.Time
	waves  map[domain.TaskID]int
	reader *ledgerlog.Reader // nil when the log cannot be read
	costs  reviewCosts
}

// readReviews reads the plan's log once: the ledger, and each task's
// review rounds and costs.
func readReviews(p *store.Plan) (*ledgerlog.Reader, reviewCosts) {
	costs := reviewCosts{}
	reader, _ := ledgerlog.Read(func(fn func(events.Event), warn func(string)) error {
		return p.Store.Scan(p.ID, func(e events.Event) { costs.add(e); fn(e) }, warn)
	}, nil)
	return reader, costs
}

// task is one task's row.
func (f watchFacts) task(r taskrec.Record) watchTask {
	id := r.ID
	wt := watchTask{ID: id, Title: r.Title, Status: r.Display, Wave: f.waves[id],
		Round: f.costs.round[id], CostUSD: f.costs.usd[id], Tokens: f.costs.tokens[id]}
	if r.Recorded || r.State == lifecycle.Pending {
		wt.State = string(r.State)
	}
	if wt.Status != plan.StatusPending && wt.Status != plan.StatusInProgress {
		wt.Wave = 0
	}
	for _, c := range f.claims {
		if c.Task == id {
			wt.Agent, wt.Lease = c.Agent, leaseAge(c, f.now)
		}
	}
	if f.st != nil && f.st.Task() == id && cycleReview(f.st) == domain.CodeReview {
		wt.Round, wt.MaxRound = f.st.Iteration(), f.st.MaxReviews
	}
	if f.reader != nil {
		for _, fi := range f.reader.Ledger(ledgerlog.SeriesOf(domain.CodeReview, id)).Findings() {
			if fi.Status == ledger.Open {
				if wt.Open == nil {
					wt.Open = map[domain.Severity]int{}
				}
				wt.Open[fi.Severity]++
			}
		}
	}
	return wt
}

// taskWaves is each task's wave as `taskie groups` would plan every task
// (dependencies, files, group_size); none when they cannot be planned.
func taskWaves(p *store.Plan) map[domain.TaskID]int {
	tasks, _, err := (&coordPlan{p: p}).schedTasks(true)
	if err != nil {
		return nil
	}
	size := domain.DefaultGroupSize
	if cfg, err := config.Load(p.Repo.TaskieDir()); err == nil && cfg.GroupSize > 0 {
		size = cfg.GroupSize
	}
	waves, err := parallel.PlanWaves(tasks, size)
	if err != nil {
		return nil
	}
	out := map[domain.TaskID]int{}
	for _, w := range waves {
		for _, id := range w.IDs() {
			out[id] = w.Number
		}
	}
	return out
}

// leaseAge is "claimed 5m ago, 25m left" (or "…, expired 3m ago").
func leaseAge(c parallel.Claim, now time.Time) string {
	age := ""
	if !c.Acquired.IsZero() && !now.IsZero() {
		age = "claimed " + roughAge(now.Sub(c.Acquired)) + " ago, "
	}
	switch {
	case c.Endless():
		return age + "never expires"
	case now.IsZero():
		return strings.TrimSuffix(age, ", ")
	case c.Live(now):
		return age + roughAge(c.Expires.Sub(now)) + " left"
	}
	return age + "expired " + roughAge(now.Sub(c.Expires)) + " ago"
}

// roughAge is a duration to the minute ("<1m", "5m", "2h05m"), so that
// the screen changes when something does, not every second.
func roughAge(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "<1m"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return strconv.Itoa(int(d/(24*time.Hour))) + "d"
}

// reviewCosts folds the REVIEW_FINISHED events per task (0: plan-wide
// reviews): the last round, what they cost, the tokens they used.
type reviewCosts struct {
	round  map[domain.TaskID]int
	usd    map[domain.TaskID]float64
	tokens map[domain.TaskID]int64
}

func (c *reviewCosts) add(e events.Event) {
	if e.Event != events.ReviewFinished && e.Event != events.ReviewFailed {
		return
	}
	if c.round == nil {
		c.round, c.usd, c.tokens = map[domain.TaskID]int{}, map[domain.TaskID]float64{}, map[domain.TaskID]int64{}
	}
	task, _ := domain.ParseTaskID(e.Task)
	m, _ := events.MetaOf[events.ReviewFinishedMeta](e) // a failure's meta is its prefix
	if m.Review == string(domain.CodeReview) && m.Iteration > 0 {
		c.round[task] = m.Iteration
	}
	c.usd[task] += max(m.CostUSD, 0)
	c.tokens[task] += m.Usage.Total()
}

// severities in the order the screen lists open findings.
func severities() []domain.Severity {
	return []domain.Severity{domain.Blocker, domain.Major, domain.Minor, domain.Nit}
}

// openText is "1 blocker, 2 minor"; "-" when nothing is open.
func openText(open map[domain.Severity]int) string {
	var parts []string
	for _, s := range severities() {
		if n := open[s]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, s))
		}
	}
	for s, n := range open { // a severity this version does not know
		if !slices.Contains(severities(), s) && n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, s))
		}
	}
	return orNone(strings.Join(parts, ", "))
}

// usdText is "$0.42", "-" when unknown.
func usdText(usd float64) string {
	if usd <= 0 {
		return "-"
	}
	return fmt.Sprintf("$%.2f", usd)
}

// tokensText is "12.3k", "1.2M", "-" when unknown.
func tokensText(n int64) string {
	switch {
	case n <= 0:
		return "-"
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}

// renderWatch writes the screen as plain text lines: the needs-you list,
// then each plan's line and its task table.
func renderWatch(w io.Writer, v *watchView) {
	if len(v.Needs) == 0 {
		fmt.Fprint(w, "needs you: nothing\n\n")
	} else {
		printNeedsTop(w, v.Needs)
	}
	if len(v.Plans) == 0 {
		fmt.Fprintln(w, "no plans yet: `taskie plan new` starts one")
	}
	for i, p := range v.Plans {
		if i > 0 {
			fmt.Fprintln(w)
		}
		renderWatchPlan(w, p)
	}
}

func renderWatchPlan(w io.Writer, p watchPlan) {
	if p.Err != "" {
		fmt.Fprintf(w, "plan %s: cannot be read: %s\n", p.ID, p.Err)
		return
	}
	head := []string{"plan " + p.ID}
	if p.Phase != "" {
		head = append(head, p.Phase)
	}
	if p.Task != 0 {
		head = append(head, "task "+p.Task.String())
	}
	head = append(head, fmt.Sprintf("%d/%d done", p.Done, p.Total))
	if p.Reviews > 0 || p.SpentUSD > 0 {
		spent := fmt.Sprintf("%d review(s)", p.Reviews)
		if p.SpentUSD > 0 {
			spent += " " + usdText(p.SpentUSD)
		}
		if p.Tokens > 0 {
			spent += " " + tokensText(p.Tokens) + " tokens"
		}
		head = append(head, spent)
	}
	if p.Paused {
		head = append(head, "PAUSED")
	}
	fmt.Fprintln(w, strings.Join(head, " · "))
	if len(p.Tasks) == 0 {
		fmt.Fprintln(w, "  no tasks yet")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  TASK\tSTATE\tWAVE\tCLAIM\tROUND\tOPEN FINDINGS\tCOST\tTOKENS\tTITLE")
	for _, t := range p.Tasks {
		state := t.State
		if state == "" {
			state = t.Status // no lifecycle record: tasks.md's word
		}
		wave, claim, round := "-", "-", "-"
		if t.Wave > 0 {
			wave = strconv.Itoa(t.Wave)
		}
		if t.Agent != "" {
			claim = t.Agent
			if t.Lease != "" {
				claim += " (" + t.Lease + ")"
			}
		}
		if t.Round > 0 {
			round = strconv.Itoa(t.Round)
			if t.MaxRound > 0 {
				round += "/" + strconv.Itoa(t.MaxRound)
			}
		}
		cells := []string{"  " + t.ID.String(), orNone(state), wave, oneLineCell(claim), round, openText(t.Open),
			usdText(t.CostUSD), tokensText(t.Tokens), oneLineCell(t.Title)}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
}

// fitScreen cuts the text to the terminal: each line to width columns,
// and at most height lines, the last saying how many were left out.
func fitScreen(text []byte, width, height int) []string {
	lines := strings.Split(strings.TrimRight(string(text), "\n"), "\n")
	if height > 0 && len(lines) > height {
		left := len(lines) - height + 1
		lines = append(lines[:height-1], fmt.Sprintf("… %d more line(s): enlarge the terminal, or `taskie watch | less`", left))
	}
	if width > 0 {
		for i, l := range lines {
			lines[i] = cutWidth(l, width)
		}
	}
	return lines
}

// cutWidth keeps the first width runes of s (one column each: taskie
// prints no wide characters of its own).
func cutWidth(s string, width int) string {
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	var b bytes.Buffer
	for i, r := range []rune(s) {
		if i == width-1 {
			b.WriteRune('…')
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}
