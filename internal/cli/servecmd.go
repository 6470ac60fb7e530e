package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/clock"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/fsafe"
	"github.com/taskie-dev/taskie/internal/history/ledgerlog"
	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/ledger"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/parallel"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/serve"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/taskrec"
)

// newServeCmd is `taskie serve`; nothing is built until it runs, so the
// hook path does not pay for the dashboard.
func newServeCmd(s *Streams, g *globals) *cobra.Command {
	var addr string
	var noToken bool
	c := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:0] [--no-token]",
		Short: "A live, read-only web dashboard of every plan (docs/dashboard.md)",
		Long: `Serve a web dashboard of the repository's plans on this machine: what needs
you first, then every plan, each plan's tasks (lifecycle, claims, review
rounds, findings, cost), and each task's timeline, reviews and findings. Pages
update themselves within 2 seconds of a change. It only reads: no plan file is
written.

It listens on 127.0.0.1 (a free port unless --addr names one) and prints the
URL on stdout; the URL carries a random token, and a request without it is
refused (--no-token serves without, to localhost names only). Ctrl-C stops it.`,
		Example: "  taskie serve\n  taskie serve --addr 127.0.0.1:8765",
		Args:    maxArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), s, g, addr, noToken)
		},
	}
	c.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "listen on `host:port` (port 0: a free one)")
	c.Flags().BoolVar(&noToken, "no-token", false, "serve without the random token in the URL")
	return c
}

func runServe(ctx context.Context, s *Streams, g *globals, addr string, noToken bool) error {
	r, err := g.repo()
	if err != nil {
		return err
	}
	root, err := fsafe.Open(r.Root)
	if err != nil {
		return err
	}
	defer root.Close()
	src := &serveSource{r: r, clk: g.clock(), root: root, coord: map[string]*fsafe.Root{}}
	defer src.close()
	token := ""
	if !noToken {
		token = serve.NewToken()
	}
	h, err := serve.New(src, serve.Options{Token: token, Logf: func(f string, a ...any) { fmt.Fprintf(s.Err, f+"\n", a...) }})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return usageErr(fmt.Errorf("--addr %s: %w", addr, err), "name a free local port (--addr 127.0.0.1:8765), or leave --addr out to take any")
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		fmt.Fprintf(s.Err, "taskie: warning: --addr %s listens beyond this machine; only the token keeps others out\n", addr)
	}
	host := ln.Addr().String()
	if strings.HasPrefix(host, "[::]") || strings.HasPrefix(host, "0.0.0.0") {
		_, port, _ := net.SplitHostPort(host)
		host = net.JoinHostPort("127.0.0.1", port)
	}
	u := "http://" + host + "/"
	if token != "" {
		u += "?token=" + token
	}
	fmt.Fprintln(s.Out, u)
	fmt.Fprintf(s.Err, "taskie: dashboard of %s at %s (read-only; Ctrl-C stops it)\n", r.Root, u)
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx) // the event streams end with their requests
	return nil
}

// serveSource reads the dashboard's data with the CLI's readers, one page
// at a time (the readers share caches that are not meant for concurrent
// use).
type serveSource struct {
	mu    sync.Mutex
	r     *plan.Repo
	clk   clock.Clock
	root  *fsafe.Root
	coord map[string]*fsafe.Root // plan → its coordination directory, for Version
}

func (src *serveSource) close() {
	for _, c := range src.coord {
		if c != nil {
			c.Close()
		}
	}
}

// open returns the plan, ErrNotFound when the repository has no such plan.
func (src *serveSource) open(id string) (*store.Plan, error) {
	ids, err := src.r.Plans()
	if err != nil {
		return nil, err
	}
	if !slices.Contains(ids, id) {
		return nil, fmt.Errorf("plan %q: %w", id, serve.ErrNotFound)
	}
	return implied.Get(src.r, id, src.clk)
}

func (src *serveSource) Fleet(context.Context) (*serve.Fleet, error) {
	src.mu.Lock()
	defer src.mu.Unlock()
	rows, err := planRows(src.r, src.clk)
	if err != nil {
		return nil, err
	}
	items, err := needsOf(src.r, nil, src.clk)
	if err != nil {
		return nil, err
	}
	f := &serve.Fleet{Repo: src.r.Root, Needs: toNeeds(needsViews(items)), At: src.clk.Now()}
	per := map[string]int{}
	for _, it := range items {
		per[it.Plan]++
	}
	shared := false
	for _, row := range rows {
		pr := serve.PlanRow{ID: row.ID, State: row.State, Mode: row.Mode, Owner: row.Owner, Done: row.Tasks.Done, Total: row.Tasks.Total,
			Paused: row.Paused, Default: row.Default, Needs: per[row.ID], Changed: row.Changed, Review: reviewText(row.Review)}
		if row.Phase != nil {
			pr.Phase = string(*row.Phase)
		}
		if row.Next != nil {
			pr.Next = string(*row.Next)
		}
		f.Plans = append(f.Plans, pr)
		if !shared {
			if p, err := implied.Get(src.r, row.ID, src.clk); err == nil {
				shared = dbURL(p) != ""
				p.Store.Close()
			}
		}
	}
	if shared {
		f.Notes = append(f.Notes, "The shared store (PostgreSQL) is on: claims, leases and the lifecycle are every clone's, "+
			"but only this clone's plans are listed — the store holds the clones' claims and events, not their plan files. "+
			"Run taskie serve in another clone to see its plans.")
	}
	return f, nil
}

// reviewText is "code-review iteration 2 of 8".
func reviewText(r *reviewView) string {
	if r == nil {
		return ""
	}
	return fmt.Sprintf("%s iteration %d of %d, clean %d of %d", r.Review, r.Iteration, r.MaxReviews, r.Clean, r.Needed)
}

func toNeeds(vs []needsView) []serve.Need {
	out := make([]serve.Need, len(vs))
	for i, v := range vs {
		out[i] = serve.Need(v)
	}
	return out
}

// planCosts is what one read of a plan's log gives the pages.
type planCosts struct {
	ledger *ledgerlog.Reader
	points []serve.CostPoint
	cost   map[string]float64
	tokens map[string]int64
	round  map[string]int
	events map[string][]events.Event // by task
}

// readCosts folds the plan's log once: the ledger, each review's cost and
// tokens, each task's review round and events.
func readCosts(p *store.Plan, keepEvents string) planCosts {
	c := planCosts{ledger: &ledgerlog.Reader{}, cost: map[string]float64{}, tokens: map[string]int64{}, round: map[string]int{}, events: map[string][]events.Event{}}
	var total float64
	var tot int64
	_ = p.Store.Scan(p.ID, func(e events.Event) {
		c.ledger.Add(e)
		if keepEvents != "" && e.Task == keepEvents {
			c.events[e.Task] = append(c.events[e.Task], e)
		}
		if e.Event != events.ReviewFinished {
			return
		}
		m, err := events.MetaOf[events.ReviewFinishedMeta](e)
		cost, tok := m.CostUSD, m.Usage.Total()
		total += max(cost, 0)
		tot += tok
		c.cost[e.Task] += max(cost, 0)
		c.tokens[e.Task] += tok
		if e.HasMeta("iteration") && !events.BadMeta(err, "iteration") {
			c.round[e.Task] = m.Iteration
		}
		c.points = append(c.points, serve.CostPoint{At: e.TS, Task: e.Task, CostUSD: cost, Total: total, Tokens: tok, TotalTok: tot})
	}, func(string) {})
	return c
}

func (src *serveSource) Plan(_ context.Context, id string) (*serve.Plan, error) {
	src.mu.Lock()
	defer src.mu.Unlock()
	p, err := src.open(id)
	if err != nil {
		return nil, err
	}
	defer p.Store.Close()
	v, err := buildStatus(p)
	if err != nil {
		return nil, err
	}
	out := planHeader(p.ID, v, src.clk.Now())
	out.Needs = src.needs(p, "")
	costs := readCosts(p, "")
	out.Costs = costs.points
	if n := len(costs.points); n > 0 {
		out.Tokens = costs.points[n-1].TotalTok
	}
	// As `taskie task list` and `task show`: every clone's records with a
	// shared store, and the tasks never moved counted as pending.
	records := planRecords(p, taskrec.Input{})
	if ts, _, err := p.Tasks(); err == nil && ts != nil {
		out.Tasks = taskRows(p, records, costs)
	}
	out.States = stateCounts(records)
	if waves, err := planWaves(p); err != nil {
		out.Warnings = append(out.Warnings, "the parallel waves cannot be shown: "+err.Error())
	} else {
		out.Waves = waves
	}
	out.ReviewFiles = reviewFiles(p, 0)
	if w := claimsWarning(p); w != "" {
		out.Warnings = append(out.Warnings, w)
	}
	return out, nil
}

// planHeader is the plan page's summary, from `taskie status`.
func planHeader(id string, v *statusView, at time.Time) *serve.Plan {
	out := &serve.Plan{ID: id, Phase: v.Phase, Mode: v.Mode, Stage: v.Stage, Paused: v.Paused, Done: v.Tasks.Done, Total: v.Tasks.Total,
		SpentUSD: v.SpentUSD, BudgetUSD: v.BudgetUSD, Reviews: v.Reviews, TaskTitle: v.TaskTitle, Review: reviewText(v.Review), At: at}
	if v.NextPhase != nil {
		out.Next = string(*v.NextPhase)
	}
	if v.CurrentTask != nil {
		out.CurrentTask = *v.CurrentTask
	}
	if r := v.Running; r != nil {
		out.Running = fmt.Sprintf("%s iteration %d, model %s, reviewer %s, for %s", r.Review, r.Iteration, r.Model, r.Reviewer, r.Elapsed)
	}
	return out
}

// needs are what needs a human on plan p (on its task when task is not "").
func (src *serveSource) needs(p *store.Plan, task string) []serve.Need {
	items, err := needsOf(src.r, p, src.clk)
	if err != nil {
		return nil
	}
	var out []serve.Need
	for _, n := range toNeeds(needsViews(items)) {
		if n.Plan == p.ID && (task == "" || n.Task == task) {
			out = append(out, n)
		}
	}
	return out
}

// taskRows are the rows of the plan page's task table.
func taskRows(p *store.Plan, records []taskrec.Record, costs planCosts) []serve.TaskRow {
	claims := map[string]claimStatusView{}
	for _, c := range planClaims(p) {
		claims[c.Task] = c
	}
	var out []serve.TaskRow
	for _, r := range records {
		if !r.Row {
			continue
		}
		id := r.ID
		row := serve.TaskRow{ID: id.String(), Title: oneLineCell(r.Title), Status: r.Display, CostUSD: costs.cost[id.String()],
			Tokens: costs.tokens[id.String()], Round: costs.round[id.String()]}
		if r.Recorded || r.State == lifecycle.Pending {
			row.State, row.InState = string(r.State), domain.ShortDuration(r.InState)
		}
		if c, ok := claims[id.String()]; ok {
			row.Holder, row.Lease, row.LeaseLive = c.Agent, c.ExpiresIn, c.Live
			if c.Live {
				row.Lease = "expires in " + c.ExpiresIn
			}
		}
		row.Open = openCounts(costs.ledger, id)
		out = append(out, row)
	}
	return out
}

// openCounts counts a task's open code-review findings by severity.
func openCounts(l *ledgerlog.Reader, id domain.TaskID) []serve.SeverityCount {
	open := map[domain.Severity]int{}
	for _, f := range l.Ledger(ledgerlog.SeriesOf(domain.Phase("code-review"), id)).Findings() {
		if f.Status == ledger.Open {
			open[f.Severity]++
		}
	}
	var out []serve.SeverityCount
	for _, sv := range severities() {
		if open[sv] > 0 {
			out = append(out, serve.SeverityCount{Severity: string(sv), N: open[sv]})
		}
	}
	return out
}

// stateCounts counts the tasks in each lifecycle state.
func stateCounts(records []taskrec.Record) []serve.StateCount {
	count := map[lifecycle.State]int{}
	for _, r := range records {
		if r.Recorded || r.State == lifecycle.Pending {
			count[r.State]++
		}
	}
	var out []serve.StateCount
	for _, st := range lifecycle.States() {
		out = append(out, serve.StateCount{State: string(st), N: count[st]})
	}
	return out
}

// planWaves are the plan's parallel waves as `taskie groups` prints them.
func planWaves(p *store.Plan) ([]serve.Wave, error) {
	cp, err := coordOf(p)
	if err != nil {
		return nil, err
	}
	defer cp.close()
	size := domain.DefaultGroupSize
	if cfg, err := implied.Config(p); err == nil && cfg.GroupSize > 0 {
		size = cfg.GroupSize
	}
	tasks, _, err := cp.schedTasks(true)
	if err != nil {
		return nil, err
	}
	if len(parallel.Check(tasks)) > 0 {
		return nil, errors.New("tasks.md cannot be scheduled (`taskie validate` says why)")
	}
	aside, err := cp.asideTasks()
	if err != nil {
		return nil, err
	}
	waves, _, err := parallel.GroupsAside(tasks, size, aside)
	if err != nil {
		return nil, err
	}
	var out []serve.Wave
	for _, wv := range wavesView(waves, cp.titles()) {
		w := serve.Wave{Number: wv.Wave}
		for _, t := range wv.Tasks {
			w.Tasks = append(w.Tasks, serve.WaveTask{ID: t.Task, Title: t.Title, Status: t.Status})
		}
		out = append(out, w)
	}
	return out, nil
}

// reviewFiles lists the review files of the plan directory: task's, or
// every one when task is 0.
func reviewFiles(p *store.Plan, task domain.TaskID) []serve.ReviewFile {
	entries, err := p.Store.Root().ReadDir(store.Rel(p.ID, ""))
	if err != nil {
		return nil
	}
	var out []serve.ReviewFile
	for _, e := range entries {
		fn := plan.ParseFileName(e.Name())
		if (fn.Kind != plan.KindReview && fn.Kind != plan.KindPostReview) || !e.Type().IsRegular() || (task != 0 && fn.Task != int(task)) {
			continue
		}
		review := fn.Base + "-review"
		if fn.Base == "task" {
			review = "code-review"
		}
		if fn.Kind == plan.KindPostReview {
			review = "post-" + review
		}
		rf := serve.ReviewFile{Name: e.Name(), Review: review, N: fn.N}
		if fn.Task != 0 {
			rf.Task = domain.TaskID(fn.Task).String()
		}
		out = append(out, rf)
	}
	slices.SortStableFunc(out, func(a, b serve.ReviewFile) int {
		return cmp.Or(cmp.Compare(a.Task, b.Task), cmp.Compare(a.Review, b.Review), cmp.Compare(a.N, b.N))
	})
	return out
}

func (src *serveSource) Task(_ context.Context, planID, arg string) (*serve.Task, error) {
	src.mu.Lock()
	defer src.mu.Unlock()
	p, err := src.open(planID)
	if err != nil {
		return nil, err
	}
	defer p.Store.Close()
	id, err := p.TaskID(arg)
	if err != nil {
		return nil, fmt.Errorf("task %q: %w", arg, serve.ErrNotFound)
	}
	ts, _, err := p.Tasks()
	if err != nil {
		return nil, err
	}
	row, ok := ts.Find(int(id))
	if !ok {
		return nil, fmt.Errorf("task %s: %w", id, serve.ErrNotFound)
	}
	recs := planRecords(p, taskrec.Input{})
	rec, _ := taskrec.Find(recs, id)
	out := &serve.Task{Plan: p.ID, ID: id.String(), Title: oneLineCell(rec.Title), Status: rec.Display, At: src.clk.Now()}
	for _, h := range ts.Header {
		out.Row = append(out.Row, [2]string{h, row.Cell(h)})
	}
	if rec.Recorded || rec.State == lifecycle.Pending {
		taskLife(p, out, rec, recs)
	}
	for _, c := range planClaims(p) {
		if c.Task == id.String() {
			out.Claim = &serve.Claim{Agent: c.Agent, Expires: c.Expires.UTC().Format(time.RFC3339), Left: c.ExpiresIn, Live: c.Live}
		}
	}
	costs := readCosts(p, id.String())
	out.CostUSD, out.Tokens = costs.cost[id.String()], costs.tokens[id.String()]
	evs := taskCoordination(p, out, id, costs.events[id.String()])
	slices.SortStableFunc(evs, func(a, b events.Event) int { return a.TS.Compare(b.TS) })
	for _, e := range evs {
		hr := eventHistoryRow(e)
		out.Timeline = append(out.Timeline, serve.Event{TS: hr.TS, Event: hr.Event, Change: dashOff(hr.Change), Actor: e.Actor, Summary: dashOff(hr.Summary)})
	}
	out.Reviews = reviewFiles(p, id)
	out.Findings = taskFindings(costs.ledger, id)
	out.Needs = src.needs(p, id.String())
	return out, nil
}

// taskLife fills in the task's lifecycle state, as `taskie query` shows it.
func taskLife(p *store.Plan, out *serve.Task, rec taskrec.Record, recs []taskrec.Record) {
	timeouts, err := lifecycleTimeouts(p)
	if err != nil {
		timeouts = lifecycle.DefaultTimeouts()
	}
	q := newQueryView(rec.Life, p.Store.Now(), timeouts, taskrec.ReadyAt(recs))
	out.State, out.Since, out.InState, out.Failures = string(q.State), q.Since, domain.ShortDuration(time.Duration(q.InState)*time.Second), failures(q)
	if q.Timeout > 0 {
		out.Timeout, out.Level = domain.ShortDuration(time.Duration(q.Timeout)*time.Second), q.Level
	}
}

// taskCoordination fills in the task's result and commits from the
// coordination store and returns evs with its coordination events (claims,
// heartbeats, releases: the task's leases over time).
func taskCoordination(p *store.Plan, out *serve.Task, id domain.TaskID, evs []events.Event) []events.Event {
	cp, err := coordOf(p)
	if err != nil {
		return evs
	}
	defer cp.close()
	var tv taskShowView
	if showResultAndCommits(cp, id, &tv) == nil {
		if r := tv.Result; r != nil {
			out.Result = parallel.ResultRef(r.Task, r.Commit, r.Status)
			if r.Agent != "" {
				out.Result += " by " + r.Agent
			}
			if r.Note != "" {
				out.Result += ": " + r.Note
			}
		}
		out.Commits = tv.Commits
	}
	_ = cp.c.ScanEvents(cp.ctx, cp.key, func(e events.Event) {
		if e.Task == id.String() && e.Event != store.EventTaskResult {
			evs = append(evs, e)
		}
	})
	return evs
}

// taskFindings are the findings of a task's code reviews.
func taskFindings(l *ledgerlog.Reader, id domain.TaskID) []serve.Finding {
	var out []serve.Finding
	for _, f := range l.Ledger(ledgerlog.SeriesOf(domain.Phase("code-review"), id)).Findings() {
		where := f.File
		if where != "" && f.Line > 0 {
			where += fmt.Sprintf(":%d", f.Line)
		}
		out = append(out, serve.Finding{Review: "code-review", ID: f.ID, Severity: string(f.Severity), Title: f.Title,
			Status: string(f.Status), Where: where, Note: f.Note, Opened: f.Opened})
	}
	return out
}

func dashOff(s string) string {
	if s == "-" {
		return ""
	}
	return s
}

// reviewFileLimit bounds a review file the dashboard renders.
const reviewFileLimit = 4 << 20

func (src *serveSource) ReviewFile(_ context.Context, planID, name string) ([]byte, error) {
	src.mu.Lock()
	defer src.mu.Unlock()
	if _, err := src.open(planID); err != nil {
		return nil, err
	}
	if k := plan.ParseFileName(name).Kind; k != plan.KindReview && k != plan.KindPostReview {
		return nil, fmt.Errorf("%s: not a review file: %w", name, serve.ErrNotFound)
	}
	data, err := src.root.ReadFileLimit(store.Rel(planID, name), reviewFileLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w (moved to .taskie/archive/ when its cycle ended?)", name, serve.ErrNotFound)
	}
	return data, err
}

// Version fingerprints what the pages show: the listing (names, sizes,
// times) of .taskie/, its logs, every plan directory and every plan's
// coordination directory (claims), and the minute (for "3m ago").
func (src *serveSource) Version(context.Context) (string, error) {
	src.mu.Lock()
	defer src.mu.Unlock()
	h := fnv.New64a()
	list := func(root *fsafe.Root, rel string) {
		entries, err := root.ReadDir(rel)
		if err != nil {
			fmt.Fprintf(h, "%s!%v\n", rel, errors.Is(err, fs.ErrNotExist))
			return
		}
		for _, e := range entries {
			if fi, err := e.Info(); err == nil {
				fmt.Fprintf(h, "%s/%s %d %d\n", rel, e.Name(), fi.Size(), fi.ModTime().UnixNano())
			}
		}
	}
	list(src.root, ".taskie")
	list(src.root, ".taskie/logs")
	ids, err := src.r.Plans()
	if err != nil {
		return "", err
	}
	for _, id := range ids {
		list(src.root, store.Rel(id, ""))
		if c := src.coordRoot(id); c != nil {
			list(c, ".")
		}
	}
	fmt.Fprintf(h, "%d", src.clk.Now().Unix()/60)
	return fmt.Sprintf("%x", h.Sum64()), nil
}

// coordRoot is the plan's coordination directory (file claims), opened
// once; nil when it does not exist yet or the store is a database.
func (src *serveSource) coordRoot(id string) *fsafe.Root {
	if c, ok := src.coord[id]; ok && c != nil {
		return c
	}
	fc, err := store.OpenFileCoord(src.r.Root)
	if err != nil {
		return nil
	}
	dir := fc.Dir(store.PlanKey{Plan: id})
	fc.Close()
	c, err := fsafe.Open(dir)
	if err != nil {
		return nil // created with the first claim: looked for again next time
	}
	src.coord[id] = c
	return c
}
