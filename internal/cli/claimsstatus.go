package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/history"
	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/parallel"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/taskrec"
)

// This file holds what the parallel commands (ready, claim, heartbeat,
// release, groups, worktree, task result) share, and the claims that
// `taskie status` shows.

// agentEnv names the agent when --as is not given.
const agentEnv = "TASKIE_AGENT"

// coordPlan is a plan with its coordination store: the claims, leases and
// coordination events every worktree of the clone shares (or, with a
// shared store, every clone), and the clone's own record of its worktrees,
// which always lives in files.
type coordPlan struct {
	p     *store.Plan
	c     store.Coordination
	files *store.FileCoord
	key   store.PlanKey
	ctx   context.Context
	// known, when set, is the results as read once for the command
	// (claim --next reads them for the schedule and for what it skips).
	known *results
}

// openCoord opens the plan named by arg (or --plan, or the most recent)
// and its coordination store.
func (g *globals) openCoord(arg string) (*coordPlan, error) {
	p, err := g.openPlan(arg)
	if err != nil {
		return nil, err
	}
	return coordOf(p)
}

// coordOf opens the coordination store of an open plan.
func coordOf(p *store.Plan) (*coordPlan, error) {
	ctx := context.Background()
	c, proj, err := openCoordination(ctx, p)
	if err != nil {
		return nil, err
	}
	files, ok := c.(*store.FileCoord)
	if !ok {
		if files, err = store.OpenFileCoord(p.Repo.Root); err != nil {
			c.Close()
			return nil, err
		}
	}
	return &coordPlan{p: p, c: c, files: files, key: store.PlanKey{Project: proj, Plan: p.ID}, ctx: ctx}, nil
}

// openCoordination opens the store that holds the plan's claims: the
// files of the clone, or the database that TASKIE_DATABASE_URL or the
// `store` setting names.
func openCoordination(ctx context.Context, p *store.Plan) (store.Coordination, string, error) {
	settings := coordSettings(p.Repo.TaskieDir())
	settings.Clock = p.Store.Clock // file leases: the real clock unless TASKIE_TEST_CLOCK=1
	c, project, err := store.OpenCoordination(ctx, p.Repo.Root, settings)
	if err != nil {
		return nil, "", dbErr(err)
	}
	return c, project, nil
}

func (cp *coordPlan) close() {
	if c, ok := cp.c.(*store.FileCoord); !ok || c != cp.files {
		cp.files.Close()
	}
	cp.c.Close()
}

// now is the coordination clock (TASKIE_NOW in tests).
func (cp *coordPlan) now() (time.Time, error) {
	t, err := cp.c.Now(cp.ctx)
	if err != nil {
		return t, usageErr(err, "unset it, or give a time like 2026-05-01T12:00:00Z")
	}
	return t, nil
}

// agentName is --as, else $TASKIE_AGENT: a name without spaces.
func agentName(flag string) (string, error) {
	name := strings.TrimSpace(cmp.Or(flag, os.Getenv(agentEnv)))
	hint := "name the agent with --as NAME (or export TASKIE_AGENT=NAME): one name per agent, the same for all its claims"
	switch {
	case name == "":
		return "", usageErr(errors.New("an agent name is required"), hint)
	case len(name) > 128 || strings.IndexFunc(name, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) >= 0:
		return "", usageErr(fmt.Errorf("agent name %q: use at most 128 printable characters without spaces", name), hint)
	}
	return name, nil
}

// schedTasks reads the plan's tasks for scheduling: tasks.md and, with
// files, the file sets of the open tasks (withFiles). Claims skip the
// reads; ready reads only the files of the tasks it prints. Unknown
// priorities come back as problems; dependency problems are left to the
// caller.
func (cp *coordPlan) schedTasks(files bool) ([]parallel.Task, []parallel.Problem, error) {
	return cp.schedTasksOf(files, true)
}

// schedTasksOf is schedTasks; without results the coordination log is
// not read (a claim in one statement reads the results in the store).
func (cp *coordPlan) schedTasksOf(files, results bool) ([]parallel.Task, []parallel.Problem, error) {
	ts, _, err := cp.p.Tasks()
	if err != nil {
		return nil, nil, err
	}
	if ts == nil {
		return nil, nil, usageErr(fmt.Errorf("plan %s has no tasks.md yet", cp.p.ID), "write the task table first (`"+actionRef("create-tasks")+"`)")
	}
	snap, err := cp.p.Snapshot()
	if err != nil {
		return nil, nil, err
	}
	tasks, problems := parallel.FromTable(ts, nil)
	in := taskrec.Input{Untimed: true} // scheduling shows no time
	// Watch plans from the plan's files alone; a claim in one statement
	// reads the results in the store.
	if cp.c != nil && results {
		if res, err := cp.results(); err == nil {
			in.Results = res.byTask()
		}
	}
	withRecords(tasks, implied.View(cp.p, snap, in))
	if files {
		if err := cp.withFiles(tasks); err != nil {
			return nil, nil, err
		}
	}
	return tasks, problems, nil
}

// withFiles fills in the file set of each open task of tasks whose Files
// cell is empty: the paths its task file names. A closed task (done,
// cancelled, completed, abandoned) is never scheduled, so its file is not
// read: a read costs what it shows, not the size of the plan's history.
func (cp *coordPlan) withFiles(tasks []parallel.Task) error {
	ts, _, err := cp.p.Tasks()
	if err != nil || ts == nil {
		return err
	}
	snap, err := cp.p.Snapshot()
	if err != nil {
		return err
	}
	filesCol := ""
	for _, h := range ts.Header {
		if strings.EqualFold(strings.TrimSpace(h), "files") {
			filesCol = h
		}
	}
	var names []string
	var idx []int
	for i, t := range tasks {
		if parallel.StandingOf(t.Status, t.Life).Closed() {
			continue
		}
		if pt, ok := ts.Find(int(t.ID)); ok && filesCol != "" && strings.TrimSpace(pt.Cell(filesCol)) != "" {
			continue
		}
		names, idx = append(names, plan.TaskFile(int(t.ID))), append(idx, i)
	}
	k := 0 // ReadRegularFiles calls back in order; a missing file is an error
	snap.ReadRegularFiles(names, func(_ string, data []byte, err error) {
		if err == nil {
			tasks[idx[k]].Files = parallel.FilesIn(data)
		}
		k++
	})
	return nil
}

// withRecords sets what scheduling reads of each task from its one
// record: the Status cell that renders its lifecycle state, the state
// itself (scheduling leaves out what the lifecycle closed or escalated,
// parallel.StandingOf), and whether it awaits its retry (its latest
// result failed).
func withRecords(tasks []parallel.Task, rs []taskrec.Record) {
	by := taskrec.ByID(rs)
	for i := range tasks {
		r, ok := by[tasks[i].ID]
		if !ok {
			continue
		}
		tasks[i].Status = r.Display
		if r.Recorded {
			tasks[i].Life = r.State
		}
		tasks[i].Retry = r.Result != nil && r.Result.Status == parallel.ResultFailed
	}
}

// titles maps task ids to their titles in tasks.md.
func (cp *coordPlan) titles() map[domain.TaskID]string {
	out := map[domain.TaskID]string{}
	if ts, _, err := cp.p.Tasks(); err == nil && ts != nil {
		for _, t := range ts.Tasks {
			out[domain.TaskID(t.ID)] = t.Title()
		}
	}
	return out
}

// refuseIfPaused refuses a new claim on a paused plan: pause stops all
// automation, claims included.
func (cp *coordPlan) refuseIfPaused() error {
	st, err := cp.p.State()
	switch {
	case errors.Is(err, state.ErrNotFound):
		return nil
	case err != nil:
		return stateErr(cp.p, err)
	case !st.IsEnabled():
		return &exitError{code: ExitProblems, err: fmt.Errorf("plan %s is paused: no task can be claimed", cp.p.ID),
			hint: "`taskie resume" + cp.p.PlanFlag() + "` turns automation back on"}
	}
	return nil
}

// failedTasks is state.json's failed_tasks: tasks past their retries.
func (cp *coordPlan) failedTasks() []domain.TaskID {
	if st, err := cp.p.State(); err == nil {
		return st.FailedTasks
	}
	return nil
}

// results summarises the TASK_RESULT events of the coordination log: the
// latest status per task, and the failed attempts per task since its last
// deliberate retry.
type results struct {
	latest   map[domain.TaskID]events.Event
	failures map[domain.TaskID]int
	// end is where the file store's log was read to (kindScanner): a
	// claim catches up from there under the coordination lock.
	end int64
}

// add folds one TASK_RESULT in.
func (r *results) add(e events.Event) {
	if e.Event != store.EventTaskResult {
		return
	}
	id, err := domain.ParseTaskID(e.Task)
	if err != nil {
		return
	}
	switch resultStatus(e) {
	case parallel.ResultFailed:
		r.failures[id]++
	case parallel.ResultRetry: // claim --retry: the count starts again, no result stands
		delete(r.failures, id)
		delete(r.latest, id)
		return
	}
	r.latest[id] = e
}

func (cp *coordPlan) results() (results, error) {
	r := results{latest: map[domain.TaskID]events.Event{}, failures: map[domain.TaskID]int{}}
	if cp.c == nil { // not opened (the waves of watch and serve): no results known
		return r, nil
	}
	if cp.known != nil {
		return *cp.known, nil
	}
	if k, ok := cp.c.(kindScanner); ok { // the results' lines only are decoded
		end, err := k.ScanEventsOf(cp.ctx, cp.key, store.EventTaskResult, 0, r.add)
		r.end = end
		return r, err
	}
	err := cp.c.ScanEvents(cp.ctx, cp.key, r.add)
	return r, err
}

// catchUp folds in the results logged since r was read; changed says
// whether there were any. Run it under the coordination lock, where
// results are logged, to decide on every result logged so far.
func (cp *coordPlan) catchUp(r *results) (changed bool, err error) {
	k, ok := cp.c.(kindScanner)
	if !ok {
		return false, nil
	}
	end, err := k.ScanEventsOf(cp.ctx, cp.key, store.EventTaskResult, r.end, func(e events.Event) {
		changed = true
		r.add(e)
	})
	if errors.Is(err, store.ErrLogShrank) { // replaced: read again whole
		*r = results{latest: map[domain.TaskID]events.Event{}, failures: map[domain.TaskID]int{}}
		end, err = k.ScanEventsOf(cp.ctx, cp.key, store.EventTaskResult, 0, r.add)
		changed = true
	}
	r.end = end
	return changed, err
}

// kindScanner is a coordination store that reads the events of one kind
// from an offset of its log without decoding the others.
type kindScanner interface {
	ScanEventsOf(ctx context.Context, p store.PlanKey, kind string, from int64, fn func(events.Event)) (int64, error)
}

// resultOf reads a TASK_RESULT's meta.
func resultOf(e events.Event) events.TaskResultMeta {
	m, _ := events.MetaOf[events.TaskResultMeta](e)
	return m
}

func resultStatus(e events.Event) string {
	return resultOf(e).Status
}

// completed reports whether task's latest result is complete: its work
// waits to be merged and marked done, so it is not ready again.
func (r results) completed(task domain.TaskID) bool {
	e, ok := r.latest[task]
	return ok && resultStatus(e) == parallel.ResultComplete
}

// byTask is each task's latest result as its record holds it.
func (r results) byTask() map[domain.TaskID]taskrec.Result {
	out := make(map[domain.TaskID]taskrec.Result, len(r.latest))
	for id, e := range r.latest {
		m := resultOf(e)
		out[id] = taskrec.Result{Status: m.Status, Commit: m.Commit, Agent: e.Actor, At: e.TS}
	}
	return out
}

// finished says which tasks no agent should take: those in failed_tasks
// (past their retries) and those whose latest result is complete (their
// work waits to be merged and marked done).
func (cp *coordPlan) finished() (func(domain.TaskID) bool, error) {
	res, err := cp.results()
	if err != nil {
		return nil, err
	}
	failed := cp.failedTasks()
	return func(id domain.TaskID) bool { return slices.Contains(failed, id) || res.completed(id) }, nil
}

// readyTasks is parallel.Ready without the finished tasks.
func (cp *coordPlan) readyTasks(tasks []parallel.Task, claims []parallel.Claim, now time.Time) ([]parallel.Task, error) {
	skip, err := cp.finished()
	if err != nil {
		return nil, err
	}
	return readyExcept(tasks, claims, now, skip), nil
}

func readyExcept(tasks []parallel.Task, claims []parallel.Claim, now time.Time, skip func(domain.TaskID) bool) []parallel.Task {
	return slices.DeleteFunc(parallel.Ready(tasks, claims, now), func(t parallel.Task) bool { return skip(t.ID) })
}

// refused turns a refused claim decision into exit 1 with its reason.
func refused(d parallel.ClaimDecision, hint string) error {
	return &exitError{code: ExitProblems, err: d.Err, hint: hint}
}

// claimStatusView is a claim as `taskie status` shows it.
type claimStatusView struct {
	Task      string    `json:"task"`
	Agent     string    `json:"agent"`
	Expires   time.Time `json:"expires"`
	Live      bool      `json:"live"`
	ExpiresIn string    `json:"expires_in"`      // "29m10s", or "expired 3m0s ago"
	Token     int64     `json:"token"`           // the fencing token; 0 from before tokens
	Place     string    `json:"place,omitempty"` // machine:clone:worktree of the holder
}

// whoAmI is the agent name a command of this runner uses without --as:
// $TASKIE_AGENT, else its identity (machine, clone, worktree, session).
func whoAmI(p *store.Plan) string {
	if name, err := agentName(""); err == nil {
		return name
	}
	return defaultAgent(p.Repo.Root)
}

// planClaims lists a plan's claims for `taskie status`; a coordination
// store that cannot be read shows none (status still works), and
// claimsWarning says why.
func planClaims(p *store.Plan) []claimStatusView {
	out, _ := claimSourceOf(p).claims()
	return out
}

// claimsWarning is the one-line warning of the last failed read of the
// shared store (the claims, or every clone's lifecycle), "" when none.
func claimsWarning(p *store.Plan) string {
	src := claimSourceOf(p)
	src.mu.Lock()
	defer src.mu.Unlock()
	if src.err == nil {
		return ""
	}
	return fmt.Sprintf("the coordination store could not be read, so claims or the other clones' lifecycle may be missing: %v", src.err)
}

// claimSource reads a plan's claims on one connection, opened on first use
// and kept for the process: `taskie status --watch` redraws every second
// on the same session. A failed read closes it; the next read reconnects.
type claimSource struct {
	p   *store.Plan
	mu  sync.Mutex
	c   store.Coordination
	key store.PlanKey
	err error // of the last read
}

var (
	claimSourcesMu sync.Mutex
	claimSources   = map[string]*claimSource{}
)

// claimSourceOf returns the claim source of p's repository and plan.
func claimSourceOf(p *store.Plan) *claimSource {
	k := p.Repo.Root + "\x00" + p.ID
	claimSourcesMu.Lock()
	defer claimSourcesMu.Unlock()
	src := claimSources[k]
	if src == nil {
		src = &claimSource{p: p}
		claimSources[k] = src
	}
	return src
}

// sharedLifecycle folds the lifecycle events of every clone, as the shared
// store holds them, on the claims' connection; ok is false with the file
// store (state.json's records are then the clone's view) or when the
// database cannot be read (the claims' warning says why).
func sharedLifecycle(p *store.Plan) (map[domain.TaskID]lifecycle.Task, bool) {
	if dbURL(p) == "" {
		return nil, false
	}
	src := claimSourceOf(p)
	src.mu.Lock()
	defer src.mu.Unlock()
	if err := src.open(context.Background()); err != nil {
		src.err = err
		return nil, false
	}
	log, ok := src.c.(store.PlanLog)
	if !ok {
		return nil, false
	}
	if n, err := cloneMissing(context.Background(), p, log, src.key); err != nil || n > 0 {
		return nil, false // not all of this clone's moves are there yet: its own
	}
	fold := history.NewLifecycle()
	var l events.Lean
	err := log.ScanLog(context.Background(), src.key, store.LogQuery{Kinds: history.LifecycleKinds()}, func(line []byte) error {
		if events.ParseLean(line, &l) == nil {
			fold.Add(&l)
		}
		return nil
	})
	if err != nil {
		src.err = err
		src.c.Close()
		src.c = nil
		return nil, false
	}
	return fold.Tasks(), true
}

// open connects, when not connected yet.
func (src *claimSource) open(ctx context.Context) error {
	if src.c != nil {
		return nil
	}
	c, project, err := openCoordination(ctx, src.p)
	if err != nil {
		return err
	}
	src.c, src.key = c, store.PlanKey{Project: project, Plan: src.p.ID}
	return nil
}

// claims reads the plan's claims with their leases on the coordination
// clock; an error names the database without its password.
func (src *claimSource) claims() ([]claimStatusView, error) {
	src.mu.Lock()
	defer src.mu.Unlock()
	out, err := src.read()
	src.err = err
	if err != nil && src.c != nil {
		src.c.Close()
		src.c = nil
	}
	return out, err
}

func (src *claimSource) read() ([]claimStatusView, error) {
	ctx := context.Background()
	if err := src.open(ctx); err != nil {
		return nil, err
	}
	claims, err := src.c.Claims(ctx, src.key)
	if err != nil || len(claims) == 0 {
		return nil, err
	}
	now, err := src.c.Now(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]claimStatusView, len(claims))
	for i, cl := range claims {
		out[i] = claimStatusView{Task: cl.Task.String(), Agent: cl.Agent, Expires: cl.Expires, Live: cl.Live(now),
			ExpiresIn: leaseLeft(cl, now), Token: cl.Token, Place: cl.Place}
	}
	return out, nil
}

// leaseLeft is "29m10s" for a live lease, "expired 3m0s ago" otherwise.
func leaseLeft(cl parallel.Claim, now time.Time) string {
	if cl.Endless() {
		return "never" // a row set to infinity by hand: release --force ends it
	}
	if cl.Live(now) {
		return cl.Expires.Sub(now).Round(time.Second).String()
	}
	return "expired " + now.Sub(cl.Expires).Round(time.Second).String() + " ago"
}

// printClaims writes the claims lines of `taskie status`.
func printClaims(w io.Writer, cs []claimStatusView) {
	for i, c := range cs {
		label := "claims: "
		if i > 0 {
			label = "        "
		}
		left := "expires in " + c.ExpiresIn
		switch {
		case c.ExpiresIn == "never":
			left = "never expires; `taskie release " + c.Task + " --force` ends it"
		case !c.Live:
			left = c.ExpiresIn + ", reclaimable"
		}
		fmt.Fprintf(w, "%s task %s by %s (%s)\n", label, c.Task, c.Agent, left)
	}
}

// queryClaimed is `taskie query --claimed`: every claim of the plan with
// its lease, live or expired; tab-separated when piped.
func queryClaimed(s *Streams, p *store.Plan, asJSON bool) error {
	cs, err := claimSourceOf(p).claims()
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			return err
		}
		return dbErr(err)
	}
	if cs == nil {
		cs = []claimStatusView{}
	}
	if asJSON {
		return writeJSON(s.Out, cs)
	}
	fmt.Fprintf(s.Err, "you are: %s\n", whoAmI(p))
	if len(cs) == 0 {
		fmt.Fprintln(s.Err, "no task is claimed")
	}
	t := table{cols: []string{"task", "agent", "expires", "live", "expires_in", "token", "place"},
		heads: []string{"TASK", "AGENT", "EXPIRES", "LEASE", "TOKEN", "PLACE"}}
	return t.print(s, len(cs), func(i int, tty bool) []string {
		c := cs[i]
		token := strconv.FormatInt(c.Token, 10)
		if !tty {
			return []string{c.Task, c.Agent, rfc3339(c.Expires), strconv.FormatBool(c.Live), c.ExpiresIn, token, cmp.Or(c.Place, "-")}
		}
		left := "expires in " + c.ExpiresIn
		switch {
		case c.ExpiresIn == "never":
			left = "never expires; `taskie release " + c.Task + " --force` ends it"
		case !c.Live:
			left = c.ExpiresIn
		}
		return []string{c.Task, c.Agent, rfc3339(c.Expires), left, token, cmp.Or(c.Place, "-")}
	})
}
