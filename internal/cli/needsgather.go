package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/taskie-dev/taskie/internal/clock"
	"github.com/taskie-dev/taskie/internal/config"
	"github.com/taskie-dev/taskie/internal/doctor"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/history/ledgerlog"
	"github.com/taskie-dev/taskie/internal/hook"
	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/needs"
	"github.com/taskie-dev/taskie/internal/parallel"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/review"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/taskrec"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// This file gathers the values of the needs-you list (internal/needs) for
// `taskie status` and `taskie query --needs-you`: one snapshot per plan,
// read from the readers status already uses. Nothing here writes.

// needsOf returns the needs-you list of the repository: every plan's when
// only is nil, else only's (with the repository's own items either way).
// A plan in open is the caller's handle, read already: it is used as it
// is, not opened (and its files read) a second time.
func needsOf(r *plan.Repo, only *store.Plan, clk clock.Clock, open ...*store.Plan) ([]needs.Item, error) {
	var plans []*store.Plan
	if only != nil {
		plans = []*store.Plan{only}
	} else {
		ids, err := r.Plans()
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			if i := slices.IndexFunc(open, func(p *store.Plan) bool { return p.ID == id }); i >= 0 {
				plans = append(plans, open[i])
			} else if p, err := implied.Get(r, id, clk); err == nil {
				plans = append(plans, p)
			}
		}
	}
	now := clk.Now()
	in := needs.Input{}
	cfg, cfgErr := config.Load(r.TaskieDir())
	if cfgErr == nil {
		in.StallAfter = cfg.StallAfter.D()
	}
	in.Repo = repoNeeds(r, cfg, plans)
	ids, _ := r.Plans()
	for _, p := range plans {
		in.Plans = append(in.Plans, planNeeds(p, len(ids), cfg, now))
	}
	return needs.For(in, now), nil
}

// repoNeeds gathers the repository's facts: trust of its config, Codex's
// view of taskie's hooks, the shared store.
func repoNeeds(r *plan.Repo, cfg config.Config, plans []*store.Plan) needs.Repo {
	var out needs.Repo
	if m := cfg.AwaitingTrust(); m != "" {
		out.Untrusted = m
		if len(plans) > 0 {
			if fi, err := plans[0].Store.Root().Stat(".taskie/" + config.FileName); err == nil {
				out.UntrustedSince = fi.ModTime().UTC().Truncate(time.Second)
			}
		}
	}
	if c, ok := codexHookCheck(r.Root); ok && !c.OK {
		out.CodexHook, out.CodexHookFix = c.Detail, c.Fix
	}
	for _, p := range plans {
		if dbURL(p) == "" {
			break
		}
		if _, err := claimSourceOf(p).claims(); err != nil {
			out.StoreErr, _, _ = strings.Cut(err.Error(), "\n")
			break
		}
	}
	return out
}

// codexHookCheck is doctor's check of the Codex hooks Codex would skip;
// ok is false when Codex has none of taskie's hooks.
var codexHookCheck = func(root string) (doctor.Check, bool) {
	e := doctor.Env{Getenv: os.Getenv, Assets: Assets, Cwd: root}
	e.Home, _ = os.UserHomeDir()
	return doctor.CodexHookTrust(e, root)
}

// planNeeds gathers one plan's facts from its snapshot, its log's tail,
// its hook log's tail and its claims.
func planNeeds(p *store.Plan, plans int, cfg config.Config, now time.Time) needs.Plan {
	out := needs.Plan{ID: p.ID, PlanFlag: store.PlanFlagFor(p.ID, plans)}
	out.Tasks = lifecycleRecords(p)
	if t, err := lifecycleTimeouts(p); err == nil {
		out.Timeouts = t
	} else {
		out.Timeouts = lifecycle.DefaultTimeouts()
	}
	tail := p.Store.Tail(p.ID)
	if len(tail) > 0 {
		out.LastProgress = tail[len(tail)-1].TS
	}
	st, err := p.State()
	if err == nil {
		out.Paused = !st.IsEnabled()
		pending := false
		if snap, err := p.Snapshot(); err == nil {
			pending = snap.PendingOther(st.Task())
		}
		out.Cycle = cycleOf(st, pending, tail)
		if st.SessionID != "" && plan.ValidID(st.SessionID) == nil {
			sess := hook.LoadSession(p.Store.Root(), st.SessionID)
			out.SessionSeen = sess.LastSeen
			// The plan is where it was at the session's last review block.
			out.BlockOpen = sess.Plan == p.ID && sess.LastReviewBlock != nil && *sess.LastReviewBlock == workflow.MarkOf(st)
		}
		if s := cfg.Ledger(); s.HasBudgets() {
			if lr, err := readLedger(p); err == nil {
				task := currentTask(st)
				out.Budget = needs.Budget{Known: true, Settings: s, SpentUSD: lr.SpentUSD, LastTook: lr.LastTook, Since: lastReview(tail),
					Spent: lr.Spent, Task: task, TaskSpent: lr.ByTask[task]}
			}
		}
	} else if !errors.Is(err, state.ErrNotFound) {
		out.Paused = true // unreadable: `taskie validate` reports it; no stall is claimed
	}
	out.Hook = hookDecisions(p)
	out.Claims, out.ClaimsNow = claimsOf(p)
	out.Lock = orphanLock(p)
	out.NotImported, out.Events = notImported(p)
	return out
}

// orphanLock is the lease of the plan's review lock when the lock is held
// and the hook that took it is gone (killed while its reviewer, or a child
// of it, lives on); nil otherwise, or when no lease tells.
func orphanLock(p *store.Plan) *needs.OrphanLock {
	root, rel := p.Store.Root(), store.Rel(p.ID, store.ReviewLockName)
	if !root.Probe(rel) {
		return nil
	}
	l, ok := review.ReadLease(root, rel)
	if !ok || l.HookRuns() {
		return nil
	}
	return &needs.OrphanLock{HookPID: l.HookPID, PGID: l.PGID, Started: l.Started, Deadline: l.Deadline}
}

// notImported counts the clone's plan events the shared store lacks, of
// all of them (0, 0 with the file store, or when the store cannot be read:
// its own item says so).
func notImported(p *store.Plan) (missing, total int) {
	if dbURL(p) == "" {
		return 0, 0
	}
	src := claimSourceOf(p)
	src.mu.Lock()
	defer src.mu.Unlock()
	ctx := context.Background()
	if err := src.open(ctx); err != nil {
		return 0, 0
	}
	log, ok := src.c.(store.PlanLog)
	if !ok {
		return 0, 0
	}
	lines, err := p.Store.PlanLines(p.ID)
	if err != nil || len(lines) == 0 {
		return 0, 0
	}
	gone, err := log.MissingPlanKeys(ctx, src.key, store.PlanKeys(lines))
	if err != nil {
		return 0, 0
	}
	return len(gone), len(lines)
}

// lifecycleRecords are the plan's lifecycle records as status shows them:
// state.json's (every clone's with a shared store), with the tasks whose
// commit is there completed in memory. They are the records the views
// fold (implied.View) without the fold: status folds its tasks once, not
// once more for the needs-you list (10,000 records cost as much as
// parsing tasks.md).
func lifecycleRecords(p *store.Plan) []lifecycle.Task {
	st, err := p.State()
	if err != nil {
		return nil
	}
	recs, shared := sharedLifecycle(p)
	if shared && recs != nil {
		recs = maps.Clone(recs) // settled below, in place
	} else if recs, err = taskrec.Records(st); err != nil {
		return nil // `taskie validate` reports the field
	}
	implied.SettledView(p, recs)
	var out []lifecycle.Task
	for _, t := range recs {
		// The record's maps are the caller's: the list gets its own.
		t.Failures, t.Entered = maps.Clone(t.Failures), maps.Clone(t.Entered)
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b lifecycle.Task) int { return int(a.ID - b.ID) })
	return out
}

// cycleOf is the review cycle a state is in; since is the plan's last
// commit that changed needs_human, else its last event.
func cycleOf(st *state.State, pendingOther bool, tail []events.Event) needs.Cycle {
	c := needs.Cycle{Review: cycleReview(st), Iteration: st.Iteration(), MaxReviews: st.MaxReviews,
		NextIsReview: domain.IsReview(st.Next()), NeedsHuman: st.NeedsHuman}
	if c.NextIsReview {
		c.MoveOn = workflow.AdvanceTarget(st.Next(), st.TDD, pendingOther)
	}
	for i := len(tail) - 1; i >= 0; i-- {
		e := tail[i]
		if c.Since.IsZero() {
			c.Since = e.TS
		}
		if e.Event == ledgerlog.NeedsHuman {
			c.Since = e.TS
			c.Why = "the review ledger found the cycle going round"
			break
		}
	}
	return c
}

// lastReview is when the last review of the tail ended, zero when none.
func lastReview(tail []events.Event) time.Time {
	for i := len(tail) - 1; i >= 0; i-- {
		if tail[i].Event == events.ReviewFinished || tail[i].Event == events.ReviewFailed {
			return tail[i].TS
		}
	}
	return time.Time{}
}

// failedWhy reads a failed review's "why" in the hook log: "code-review 2
// failed (exit): Not logged in"; kinds may hold a hyphen (not-found).
var failedWhy = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\S+ \d+ failed \(([a-z-]+)\): (.*)$`) })

// hookDecisions reads the last decisions of the plan's hook log (its
// tail only).
func hookDecisions(p *store.Plan) []needs.HookDecision {
	tail, _, err := p.Store.Root().ReadTail(".taskie/logs/"+p.ID+".log", 8<<10)
	if err != nil || len(tail) == 0 {
		return nil
	}
	var out []needs.HookDecision
	for _, line := range bytes.Split(bytes.TrimRight(tail, "\n"), []byte{'\n'}) {
		var l struct {
			Time      time.Time `json:"time"`
			Msg       string    `json:"msg"`
			Decision  string    `json:"decision"`
			Why       string    `json:"why"`
			ReviewLog string    `json:"review_log"`
		}
		if json.Unmarshal(line, &l) != nil || l.Decision == "" || l.Msg != "stop" {
			continue
		}
		d := needs.HookDecision{Time: l.Time.UTC().Truncate(time.Second), Hook: l.Msg, Log: l.ReviewLog, Decision: l.Decision, Why: l.Why}
		if m := failedWhy().FindStringSubmatch(l.Why); m != nil {
			d.Failure, d.Detail = m[1], m[2]
		}
		out = append(out, d)
	}
	return out
}

// claimsOf reads the plan's claims on the coordination clock; none when
// the store cannot be read (the store's own item says so).
func claimsOf(p *store.Plan) ([]parallel.Claim, time.Time) {
	src := claimSourceOf(p)
	src.mu.Lock()
	defer src.mu.Unlock()
	ctx := context.Background()
	if err := src.open(ctx); err != nil {
		return nil, time.Time{}
	}
	cs, err := src.c.Claims(ctx, src.key)
	if err != nil {
		return nil, time.Time{}
	}
	now, err := src.c.Now(ctx)
	if err != nil {
		return nil, time.Time{}
	}
	return cs, now
}

// needsView is one item as `--json` shows it; the piped columns are the
// same keys.
type needsView struct {
	Plan   string `json:"plan"`
	Task   string `json:"task"`
	Kind   string `json:"kind"`
	Reason string `json:"reason"`
	Since  string `json:"since"`
	Clear  string `json:"clear"`
}

// needsViews turns the items into their views.
func needsViews(items []needs.Item) []needsView {
	out := []needsView{}
	for _, it := range items {
		v := needsView{Plan: it.Plan, Kind: string(it.Reason.Kind), Reason: it.Reason.Text,
			Since: it.Since.UTC().Format(time.RFC3339), Clear: it.Clear}
		if it.Task != 0 {
			v.Task = it.Task.String()
		}
		out = append(out, v)
	}
	return out
}

// needsKeys are the columns of the piped list, as the JSON keys.
var needsKeys = []string{"plan", "task", "kind", "reason", "since", "clear"}

// printNeedsTable writes the items as a table: a header of the JSON keys,
// then tab-separated columns (aligned on a terminal: the table printer).
func printNeedsTable(s *Streams, items []needs.Item) error {
	views := needsViews(items)
	return table{cols: needsKeys}.print(s, len(views), func(i int, _ bool) []string {
		v := views[i]
		return []string{orNone(v.Plan), orNone(v.Task), v.Kind, oneLine(v.Reason), v.Since, oneLine(v.Clear)}
	})
}

// printNeedsTop writes the list at the top of `taskie status`.
func printNeedsTop(w io.Writer, items []needs.Item) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(w, "needs you (%d):\n", len(items))
	for _, it := range items {
		where := it.Plan
		if it.Task != 0 {
			where += " task " + it.Task.String()
		}
		if where != "" {
			where = "[" + strings.TrimSpace(where) + "] "
		}
		fmt.Fprintf(w, "  - %s%s (since %s)\n    clear: %s\n", where, oneLine(it.Reason.Text),
			it.Since.Local().Format("2006-01-02 15:04"), oneLine(it.Clear))
	}
	fmt.Fprintln(w)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.NewReplacer("\t", " ", "\n", " ").Replace(s)), " ")
}
