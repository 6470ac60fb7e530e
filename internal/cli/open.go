package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/taskie-dev/taskie/internal/clock"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/fsafe"
	"github.com/taskie-dev/taskie/internal/hook"
	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/parallel"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// repo finds the project from the working directory: in a linked
// worktree, the main checkout's (said once on stderr), or a refusal
// naming the -C to use.
func (g *globals) repo() (*plan.Repo, error) {
	cwd, err := g.cwd()
	if err != nil {
		return nil, err
	}
	loc, err := store.Locate(cwd)
	if err != nil {
		var nm *store.NoMainError
		if errors.As(err, &nm) {
			return nil, usageErr(err, noMainHint(nm))
		}
		return nil, usageErr(err, "run `taskie init` in the project root, or pass -C <dir>")
	}
	if n := loc.Notice(); n != "" && g.s != nil && !g.located {
		fmt.Fprintf(g.s.Err, "%s %s\n", g.s.errs().Dim("taskie:"), n)
	}
	g.located = true
	commandDir = cwd
	return loc.Repo, nil
}

// noMainHint is what to run instead in a worktree whose plan would be a
// copy: this very command, with -C naming the checkout that holds the plan.
func noMainHint(nm *store.NoMainError) string {
	args := strings.Join(argsWithoutDir(os.Args[1:]), " ")
	if nm.Main == "" {
		return fmt.Sprintf("a bare repository's worktrees share no plan: keep the plan in one checkout that is not a linked worktree and run every command there, `taskie -C <that checkout> %s`", args)
	}
	main := shellQuote(nm.Main)
	if st, err := os.Stat(nm.Main); err != nil || !st.IsDir() {
		return fmt.Sprintf("restore the main checkout %s (or run `git worktree repair` from where it moved), then `taskie -C %s %s`", nm.Main, main, args)
	}
	return fmt.Sprintf("the plan lives in the main checkout: `taskie -C %s %s`, once it has the plan (merge the branch that carries .taskie/plans there, or start one with `taskie -C %s init`)", main, args, main)
}

// argsWithoutDir drops -C/--dir and its value from a command line.
func argsWithoutDir(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(out, args[i:]...)
		case a == "-C" || a == "--dir":
			i++
		case strings.HasPrefix(a, "-C") || strings.HasPrefix(a, "--dir="):
		default:
			out = append(out, shellQuote(a))
		}
	}
	return out
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@,+%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// openPlan returns the plan named by id, by --plan, or else the default
// plan: the one `taskie plan use` set, else the most recently changed. A
// plan picked by default is named on stderr when the project has others.
// What its writes do beyond the plan (claims released) is said on stderr.
func (g *globals) openPlan(id string) (*store.Plan, error) {
	p, err := g.findPlan(id)
	if err == nil && g.s != nil {
		p.Notes = g.s.Err
	}
	return p, err
}

// findPlan is openPlan without its notes.
func (g *globals) findPlan(id string) (*store.Plan, error) {
	r, err := g.repo()
	if err != nil {
		return nil, err
	}
	if id == "" {
		id = g.plan
	}
	if id == "" {
		return g.defaultPlan(r)
	}
	return getPlan(r, id, g.clock())
}

// clock is the time the command acts at.
func (g *globals) clock() clock.Clock {
	if g.s == nil {
		return clock.Real()
	}
	return g.s.Clock
}

// getPlan opens a plan the user named; an unknown id gets the nearest one.
func getPlan(r *plan.Repo, id string, now clock.Clock) (*store.Plan, error) {
	p, err := implied.Get(r, id, now)
	if err != nil {
		ids, _ := r.Plans()
		hint := ""
		if s := workflow.Nearest(id, ids); s != "" {
			hint = fmt.Sprintf("did you mean --plan %s?", s)
		} else if len(ids) == 0 {
			hint = "create one with `taskie plan new <id>`"
		}
		return nil, usageErr(err, hint)
	}
	return p, nil
}

// defaultPlanRel holds the plan `taskie plan use` chose, relative to the
// repository root; it is machine-local (.taskie/.gitignore covers local/).
const defaultPlanRel = ".taskie/local/plan"

// defaultPlanLimit bounds the default-plan file, which holds one plan id.
const defaultPlanLimit = 1024

// readDefault returns the plan `taskie plan use` set, "" when none. A file
// taskie cannot use there (a device, a FIFO, a link out of the repository,
// more than a plan id) is an error naming it.
func readDefault(r *plan.Repo) (string, error) {
	root, err := fsafe.Open(r.Root)
	if err != nil {
		return "", err
	}
	defer root.Close()
	data, err := root.ReadFileLimit(defaultPlanRel, defaultPlanLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(data))
	if id != "" && plan.ValidID(id) != nil {
		return "", fmt.Errorf("%s: holds no plan id", root.Path(defaultPlanRel))
	}
	return id, nil
}

// usedHow is how a plan set with `taskie plan use` was chosen.
const usedHow = "set with `taskie plan use`"

// pickDefault returns the default plan and how it was chosen. bad says
// why the file of `taskie plan use` was ignored, nil when it was not.
func pickDefault(r *plan.Repo) (id, how string, bad, err error) {
	id, bad = readDefault(r)
	if id != "" {
		if dir, err := r.PlanDir(id); err == nil {
			if st, err := os.Stat(dir); err == nil && st.IsDir() {
				return id, usedHow, nil, nil
			}
		}
		how = fmt.Sprintf("the default %s set with `taskie plan use` no longer exists; ", id)
	}
	id, err = r.MostRecent()
	return id, how + "the most recently changed", bad, err
}

// warnDefault says that the default-plan file was ignored, and why.
func warnDefault(s *Streams, bad error) {
	fmt.Fprintf(s.Err, "%s %v; ignoring it: commands without --plan take the most recently changed plan (`taskie plan use <id>` or `taskie plan use --clear` replaces it)\n",
		s.errs().Yellow("taskie: warning:"), bad)
}

// defaultPlan opens the default plan and, when the project has other
// plans, says on stderr which one was picked and how to pick another.
func (g *globals) defaultPlan(r *plan.Repo) (*store.Plan, error) {
	id, how, bad, err := pickDefault(r)
	if err != nil {
		return nil, err
	}
	if bad != nil && g.s != nil && !g.picked {
		warnDefault(g.s, bad)
	}
	if id == "" {
		return nil, usageErr(store.ErrNoPlans, "")
	}
	p, err := getPlan(r, id, g.clock())
	if err != nil {
		return nil, err
	}
	ids, _ := r.Plans()
	// A plan the user set with `taskie plan use` is their explicit choice:
	// naming it before every command is noise. Only a plan picked by the
	// fallback (the most recently changed) is named.
	explicit := how == usedHow
	if len(ids) > 1 && g.s != nil && !g.picked && !explicit {
		fmt.Fprintf(g.s.Err, "%s plan %s (%s; %d plans: %s): --plan ID or `taskie plan use ID` picks another\n",
			g.s.errs().Dim("taskie:"), g.s.errs().Bold(id), how, len(ids), strings.Join(ids, ", "))
	}
	if g.s != nil && (bad != nil || len(ids) > 1) {
		g.picked = true
	}
	return p, nil
}

// stateErr explains a state.json problem and what to do about it.
func stateErr(p *store.Plan, err error) error {
	var se *state.SyntaxError
	var fe *state.FieldError
	switch {
	case errors.Is(err, state.ErrNotFound):
		return usageErr(err, fmt.Sprintf("plan %s has no state.json: `taskie continue` suggests where to start, `taskie start <task>` or `taskie done <phase>` creates it", p.ID))
	case errors.As(err, &se), errors.As(err, &fe):
		return usageErr(err, "the file was left untouched: fix it by hand at that position (`taskie validate` re-checks it), or rebuild it from events.jsonl with `taskie recover --write --force`")
	}
	return err
}

// change records a state change made by the CLI.
func change(p *store.Plan, reason string, create bool, fn func(*state.State) (*state.State, error), extra ...events.Event) (*state.State, *state.State, error) {
	return changeWith(p, reason, create, func(_ *store.Snapshot, cur *state.State) (store.Change, error) {
		n, err := fn(cur)
		return store.Change{State: n, Events: extra}, err
	})
}

// changeWith records a change made by the CLI that may touch more than
// state.json (tasks.md statuses, plan files), in one commit.
func changeWith(p *store.Plan, reason string, create bool, fn func(*store.Snapshot, *state.State) (store.Change, error)) (*state.State, *state.State, error) {
	var old, cur *state.State
	err := p.Update(func(s *store.Snapshot) (store.Change, error) {
		old = s.State
		if old == nil {
			if !create || !errors.Is(s.StateErr, state.ErrNotFound) {
				return store.Change{}, s.StateErr
			}
			old = state.New()
		}
		c, err := fn(s, old)
		if err != nil {
			return c, err
		}
		c.Actor, c.Reason, c.Create = "cli", reason, create
		if c.State == nil {
			return c, nil
		}
		// A command run by an agent session (SessionStart exported its id;
		// Codex sets CODEX_THREAD_ID, equal to its hooks' session_id)
		// claims an automated plan for that session, so the session's
		// stops drive this plan and no other session's stops do.
		if sid := cmp.Or(os.Getenv("TASKIE_SESSION_ID"), os.Getenv("CODEX_THREAD_ID")); sid != "" && c.State.Next() != "" && c.State.SessionID != sid {
			c.State = c.State.Clone()
			c.State.SessionID = sid
		}
		cur = c.State
		return c, nil
	})
	if cur == nil {
		cur = old
	}
	if err != nil {
		if _, ok := err.(*exitError); ok {
			return nil, nil, err
		}
		var se *state.SyntaxError
		var fe *state.FieldError
		if errors.As(err, &se) || errors.As(err, &fe) {
			return nil, nil, stateErr(p, err)
		}
		return nil, nil, usageErr(err, "")
	}
	return old, cur, nil
}

// inHook is set while a hook runs: the hook's stderr is the agent's block
// reason, so the mirror's warnings go to the hook log instead.
var inHook atomic.Bool

// Every plan store the command opens shares its plans' events through the
// repository's coordination store, when that is a database: the events of
// every commit are appended there too, after the log of the clone.
//
// The coordination stores apply the claims policy of package parallel: the
// store imports no decider, so the shell hands it over.
func init() {
	store.SetClaimRules(store.ClaimRules{Claim: parallel.DecideClaimAt, Heartbeat: parallel.DecideHeartbeatAt, Release: parallel.DecideReleaseAt, Fence: parallel.DecideFence})
	store.SetMirror(func(r *plan.Repo) store.Mirror {
		return &store.SharedMirror{
			Root:     r.Root,
			Settings: func() store.CoordSettings { return coordSettings(r.TaskieDir()) },
			Warn: func(msg string) {
				if inHook.Load() {
					hook.Warn(r.Root, msg)
					return
				}
				fmt.Fprintf(os.Stderr, "taskie: warning: %s\n", msg)
			},
			Progress: importProgress,
		}
	})
}

// sharedLog opens the database that holds the plan's events of every
// clone; ok is false with the file store (the clone's events.jsonl is the
// log). The caller closes c.
func sharedLog(ctx context.Context, p *store.Plan) (c store.Coordination, log store.PlanLog, key store.PlanKey, ok bool, err error) {
	settings := coordSettings(p.Repo.TaskieDir())
	if u, _ := settings.URL(); u == "" {
		return nil, nil, key, false, nil
	}
	c, proj, err := openCoordination(ctx, p)
	if err != nil {
		return nil, nil, key, false, err
	}
	log, isLog := c.(store.PlanLog)
	if !isLog {
		c.Close()
		return nil, nil, key, false, nil
	}
	return c, log, store.PlanKey{Project: proj, Plan: p.ID}, true, nil
}

// scanLog streams the plan's events that pass f (the last n when n > 0)
// to fn: from the database when the coordination store is one — every
// clone's plan events and the claims, takeovers, releases and results
// between them, in database order — else from the clone's events.jsonl.
// shared says which.
func scanLog(p *store.Plan, f events.Filter, n int, fn func(*events.Lean) error, warn func(string)) (shared bool, err error) {
	ctx := context.Background()
	c, log, key, ok, err := sharedLog(ctx, p)
	if err != nil || !ok {
		if err != nil {
			return false, err
		}
		if n > 0 {
			return false, scanPlanTail(p, f, n, fn, warn)
		}
		return false, scanPlanEvents(p, f, fn, warn)
	}
	defer c.Close()
	if missing, err := cloneMissing(ctx, p, log, key); err != nil || missing > 0 {
		// Never a silently shorter history: until the clone's events
		// are in the database, its own log is what it has.
		if err != nil {
			warn(fmt.Sprintf("plan %s: cannot tell whether this clone's events are in the shared store (%v), so this clone's own log is shown", p.ID, err))
		} else {
			warn(fmt.Sprintf("plan %s: %d of this clone's events are not in the shared store yet, so this clone's own log is shown; `taskie store import %s` adds them (the next command that changes the plan does too)", p.ID, missing, p.ID))
		}
		if n > 0 {
			return false, scanPlanTail(p, f, n, fn, warn)
		}
		return false, scanPlanEvents(p, f, fn, warn)
	}
	q := store.LogQuery{Task: f.Task, Kinds: f.Kinds, Last: n, Coord: true}
	var l events.Lean
	return true, log.ScanLog(ctx, key, q, func(line []byte) error {
		if err := events.ParseLean(line, &l); err != nil {
			warn(fmt.Sprintf("%s: plan %s: skipped an unreadable event: %v", store.RedactURL(dbURL(p)), p.ID, err))
			return nil
		}
		if f.Task != "" && l.Task != f.Task || f.Kinds != nil && !slices.Contains(f.Kinds, l.Event) {
			return nil
		}
		return fn(&l)
	})
}

// dbURL is the database URL in force for the plan's repository.
func dbURL(p *store.Plan) string {
	u, _ := coordSettings(p.Repo.TaskieDir()).URL()
	return u
}
