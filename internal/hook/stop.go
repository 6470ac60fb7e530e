package hook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/clock"
	"github.com/taskie-dev/taskie/internal/config"
	"github.com/taskie-dev/taskie/internal/fsafe"
	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/planchoice"
	"github.com/taskie-dev/taskie/internal/store"
)

// Env is what one hook call sees of the world; tests replace parts of it.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// Clock is the time the hook acts at, for its plan choice and its
	// events alike (TASKIE_NOW when set; the zero Clock is the real one).
	Clock clock.Clock
	// Format overrides the configured block output format ("" = config).
	Format string
	// InputDeadline bounds the wait for stdin.
	InputDeadline time.Duration
	// Ctx, when set, bounds the review (tests); otherwise the review is
	// cancelled when the hook is interrupted.
	Ctx context.Context
}

// DefaultInputDeadline is long enough for any agent to write its input and
// short enough that a forgotten pipe never stalls a session.
const DefaultInputDeadline = 3 * time.Second

// Stop runs the Stop hook and returns its exit code. It never panics and
// never blocks on an internal error: the user must not be trapped.
func Stop(e Env) int {
	format := e.Format
	res := func() (res Result) {
		defer func() {
			if r := recover(); r != nil {
				fmt.Fprintf(e.Stderr, "taskie: internal error: %v\n%s", r, debug.Stack())
				res = Allow(fmt.Sprintf("taskie: internal error in the Stop hook (%v); the stop was allowed. Please report it with the output of `taskie doctor`.", r))
			}
		}()
		return stop(e, &format)
	}()
	if format != FormatJSON {
		format = FormatExit2
	}
	return res.Write(e.Stdout, e.Stderr, format)
}

// warnAllow lets the agent stop and tells the user why nothing happened.
func warnAllow(e Env, msg string) Result {
	fmt.Fprintln(e.Stderr, "taskie: warning: "+msg)
	return Allow("taskie: " + msg)
}

func stop(e Env, format *string) Result {
	if e.Getenv("TASKIE_HOOK_SKIP") != "" {
		return Allow("")
	}
	in, err := readInput(e, "stop")
	if err != nil {
		return warnAllow(e, err.Error()+"; stop allowed")
	}
	repo, ok := findRepo("stop", in.Cwd)
	if !ok {
		return Allow("") // not a taskie project: stay silent and fast
	}
	cfg, cfgErr := config.Load(repo.TaskieDir())
	if *format == "" {
		*format = cfg.OutputFormat
	}
	fs, err := store.Open(repo, e.Clock)
	if err != nil {
		return warnAllow(e, err.Error())
	}
	defer fs.Close()
	now := e.Clock.Now()
	sel := SelectPlan(fs, in, now, cfg.ReviewerTimeout.D())
	id := sel.Plan
	if sel.Message != "" {
		logChoice(fs.Root(), "stop", in, sel)
	}
	logStale(fs.Root(), "stop", in, sel)
	if id == "" {
		return Allow(sel.Message)
	}
	p, err := implied.With(fs, id)
	if err != nil {
		return warnAllow(e, err.Error())
	}
	lg := openLog(fs.Root(), id)
	defer lg.close()
	if cfgErr != nil {
		lg.decision(in, "allow", "config invalid: "+cfgErr.Error())
		return warnAllow(e, cfgErr.Error()+" — reviews are skipped until it is fixed (`taskie config`)")
	}
	sess := LoadSession(fs.Root(), in.SessionID)
	before := *sess
	if !in.StopHookActive {
		sess.BlocksInRow = 0
	}
	if sess.Plan != id { // the memory is about another plan
		sess.LastReviewBlock, sess.Violations = nil, ""
	}
	s := &stopper{e: e, in: in, cfg: cfg, p: p, log: lg, sess: sess, now: now, planFlag: store.PlanFlagFor(id, sel.Plans)}
	if sel.Takeover && in.SessionID != "" {
		s.takeOver(sel.PreviousOwner, string(sel.Reason))
	}
	res := s.run()
	// The last task of a plan waits in committing with no later phase move
	// to complete it: look for its commit here (nothing when none waits).
	// A paused plan too: recording a commit made is no automation, and
	// tasks.md must not lag the reads (docs/lifecycle.md).
	if err := implied.SettleCommits(p, "hook"); err != nil {
		lg.decision(in, "warn", "lifecycle: "+err.Error())
	}
	if snap, err := p.Snapshot(); err == nil && snap.State != nil { // what needs a human, from the snapshot at hand
		lines := needsLines(id, s.planFlag, snap.State, snap.PendingOther(snap.State.Task()), cfg, now, skipFor(s.why)...)
		res = mention(res, lines)
	}
	if res.Message == "" && !res.Block && sel.Message != "" {
		res.Message = sel.Message // a plan chosen, others left waiting: say so
	}
	if res.Block {
		sess.BlocksInRow++
	}
	sess.Plan = id
	sess.LastDecision = decisionName(res)
	if sessionChanged(&before, sess, now) {
		if err := sess.Save(now); err != nil {
			lg.decision(in, "warn", "saving session memory: "+err.Error())
			if res.Block && res.needsMemory {
				res = warnAllow(e, fmt.Sprintf("could not save the session memory (%v), so this block was turned into a message to rule out a loop: %s", err, firstLine(res.Reason)))
			}
		}
	}
	lg.decision(in, decisionName(res), s.why, s.logAttrs...)
	return res
}

func decisionName(r Result) string {
	if r.Block {
		return "block"
	}
	return "allow"
}

// sessionChanged avoids a write on every stop: the memory is saved when it
// changed, or to refresh last_seen (plan ownership) every few minutes.
func sessionChanged(a, b *Session, now time.Time) bool {
	same := a.Plan == b.Plan && a.LastDecision == b.LastDecision && a.BlocksInRow == b.BlocksInRow && a.Violations == b.Violations &&
		((a.LastReviewBlock == nil) == (b.LastReviewBlock == nil)) &&
		(a.LastReviewBlock == nil || *a.LastReviewBlock == *b.LastReviewBlock)
	// A last_seen in the future (a clock set back, a copied file) is
	// rewritten too, or it would stand until that date.
	return !same || now.Sub(a.LastSeen) > 5*time.Minute || a.LastSeen.After(now.Add(planchoice.MaxClockSkew))
}

// relPath shows a path relative to the project root, for messages.
func relPath(root, path string) string {
	if rel, ok := strings.CutPrefix(path, root+string(os.PathSeparator)); ok {
		return rel
	}
	return path
}

// readInput reads the hook input and checks its cwd; every problem is
// also written to the log (docs/hook.md: input errors go to the log).
func readInput(e Env, hook string) (Input, error) {
	in, err := ReadInput(e.Stdin, e.InputDeadline)
	switch {
	case err != nil:
	case in.Cwd == "":
		err = errors.New("hook input has no \"cwd\"")
	default:
		if st, serr := os.Stat(in.Cwd); serr != nil || !st.IsDir() {
			err = fmt.Errorf("hook input cwd %q is not a directory", in.Cwd)
		}
	}
	if err != nil {
		logInputError(hook, in, err)
	}
	return in, err
}

// logChoice writes the "never silent" line of a plan choice that leaves
// plans waiting (docs/hook.md) to hook.log and to the log of each plan left
// waiting, where `taskie status` and `taskie continue` show it.
func logChoice(root *fsafe.Root, hook string, in Input, sel Selection) {
	why := "plan choice: " + string(sel.Reason) + ": " + strings.TrimPrefix(sel.Message, "taskie: ")
	d := openLogs(root)
	if d != nil {
		defer d.Close()
	}
	for _, id := range append([]string{"hook"}, sel.Candidates...) {
		lg := openLogIn(root, d, id)
		lg.event(hook, in, "allow", why)
		lg.close()
	}
}

// logStale writes to a plan's log that its owner's block was dated in the
// future and so not trusted as mid-turn.
func logStale(root *fsafe.Root, hook string, in Input, sel Selection) {
	for id, why := range sel.Stale {
		lg := openLog(root, id)
		lg.info(hook, "session", in.SessionID, "why", why)
		lg.close()
	}
}

// logInputError writes a hook input problem to the log of the project the
// hook runs in (agents run hooks in the project directory): without a
// readable input there is no cwd to go by.
func logInputError(hook string, in Input, err error) {
	wd, werr := os.Getwd()
	if werr != nil {
		return
	}
	loc, ferr := store.Locate(wd)
	if ferr != nil {
		return
	}
	fs, oerr := store.Open(loc.Repo, clock.Real()) // for its log only
	if oerr != nil {
		return
	}
	defer fs.Close()
	lg := openLog(fs.Root(), "hook")
	defer lg.close()
	lg.info("input", "hook", hook, "session", in.SessionID, "decision", "allow", "why", "bad hook input: "+err.Error())
}
