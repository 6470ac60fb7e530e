package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/hook"
	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/review"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/workflow"
)

type continueView struct {
	Plan string `json:"plan"`
	workflow.Route
	Recorded bool `json:"recorded,omitempty"` // a repair was written to state.json
	// LastHook is the hook's last decision when it failed or refused.
	LastHook *hookDecisionView `json:"last_hook_problem,omitempty"`
	// EndedReview says why continue ended a review whose hook was killed.
	EndedReview string `json:"ended_review,omitempty"`
}

// postReviewFiles names the files of the post-review a route asks for,
// relative to the project root.
func postReviewFiles(p *store.Plan, v *continueView) {
	review := domain.ReviewOf(domain.Phase(v.Action))
	if review == "" {
		return
	}
	st, err := p.State()
	if err != nil || st.Iteration() == 0 {
		return
	}
	task := int(st.Task())
	rel := func(name string) string { return filepath.ToSlash(filepath.Join(".taskie", "plans", p.ID, name)) }
	v.ReviewFile = rel(plan.ReviewFile(string(review), task, st.Iteration()))
	v.PostFile = rel(plan.PostReviewFile(string(review), task, st.Iteration()))
}

// continueOpts are the options of `taskie continue`.
type continueOpts struct {
	s      *Streams
	g      *globals
	id     string
	asJSON bool
}

func newContinueCmd(s *Streams, g *globals) *cobra.Command {
	return newContinueCmdWith(s, g, runContinue)
}

func newContinueCmdWith(s *Streams, g *globals, run func(*continueOpts) error) *cobra.Command {
	o := &continueOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "continue [plan]",
		Short: "Say which action to run next, and why",
		Long: `Compute where a plan resumes from its state and files: a pending post-review
first, a review that a crash interrupted, the task to continue, or the next
task to start. When a crash left files ahead of state.json, the state is
repaired (and says so). Without state.json it reconstructs a best guess.`,
		Args: maxArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			o.id = firstArg(args)
			return run(o)
		},
	}
	c.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")
	return c
}

func runContinue(o *continueOpts) error {
	lazyGC()
	p, err := o.g.openPlan(o.id)
	if err != nil {
		return err
	}
	st, err := p.State()
	if errors.Is(err, state.ErrNotFound) {
		st, err = nil, nil
	}
	if err != nil {
		return stateErr(p, err)
	}
	ended := endOrphanReview(p, time.Now())
	v := continueView{Plan: p.ID, Route: workflow.Continue(routeFacts(p, st), implied.Models(p)), EndedReview: ended}
	if r := runningReview(p, time.Now()); r != nil && (v.Repair != nil || v.Action == workflow.EndTurn) {
		// The "crash" is a review in progress: its file is being written.
		v.Route = workflow.Route{Action: workflow.Wait, Task: v.Task,
			Why: fmt.Sprintf("%s iteration %d is running right now (model %s, %s so far); wait for it to finish, then run `taskie continue` again (`taskie status --watch` shows it)", r.Review, r.Iteration, r.Model, r.Elapsed)}
	} else {
		v.LastHook = lastHookProblem(p)
	}
	if v.Repair != nil {
		if err := repairRoute(p, &v); err != nil {
			return err
		}
	}
	postReviewFiles(p, &v)
	if v.Command != "" {
		v.Command += p.PlanFlag()
	}
	v.PlanFlag = p.PlanFlag()
	if o.asJSON {
		return writeJSON(o.s.Out, v)
	}
	printRoute(o.s, v)
	return nil
}

// endOrphanReview ends the plan's review when its hook was killed and its
// deadline passed while something it started still holds the review lock
// (review.EndOrphan), as the next stop would: continue and the stop agree
// that no review runs. It returns what was done, "" when nothing was.
func endOrphanReview(p *store.Plan, now time.Time) string {
	root, rel := p.Store.Root(), store.Rel(p.ID, store.ReviewLockName)
	if !root.Probe(rel) {
		return ""
	}
	r := review.EndOrphan(root, rel, now)
	if !r.Ended {
		return ""
	}
	// Its processes close the lock as they die.
	for end := time.Now().Add(3 * time.Second); root.Probe(rel) && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
	}
	return r.Why
}

// repairRoute records the repair a route asks for. It recomputes the
// route on the state found under the lock, so a concurrent update is built
// upon, never overwritten.
func repairRoute(p *store.Plan, v *continueView) error {
	models := implied.Models(p)
	_, _, err := change(p, "continue: "+v.Why, false, func(cur *state.State) (*state.State, error) {
		v.Route = workflow.Continue(routeFacts(p, cur), models)
		if v.Repair == nil {
			return cur, nil
		}
		return v.Repair, nil
	})
	if err != nil {
		return err
	}
	v.Recorded = v.Repair != nil
	return nil
}

// routeFacts are the plan's facts for workflow.Continue, with what only
// the log and the environment tell: the reviews whose hook was killed
// (the Stop hook sets their files aside; continue must not adopt them)
// and the agent the route is printed for.
func routeFacts(p *store.Plan, st *state.State) workflow.RouteFacts {
	f := implied.PlanRouteFacts(p, st)
	if workflow.RouteOrphansMatter(f) { // the log is read only when a file could be an orphan's
		f.Orphans = hook.OrphanedReviews(p.Store.Tail(p.ID))
	}
	f.Agent = agentFromEnv()
	return f
}

// agentFromEnv is the agent running this command, which decides how
// taskie names an action: /taskie:<action>, or $taskie-<action> in Codex.
func agentFromEnv() workflow.Agent { return workflow.AgentFromEnv(os.Getenv) }

// actionRef names a taskie action the way the agent running this command
// invokes it.
func actionRef(action string) string { return agentFromEnv().Ref(action) }

func printRoute(s *Streams, v continueView) {
	if v.EndedReview != "" {
		fmt.Fprintf(s.Out, "orphaned review: %s\n", v.EndedReview)
	}
	fmt.Fprint(s.Out, v.Text())
	if h := v.LastHook; h != nil {
		fmt.Fprintf(s.Out, "last hook decision: %s at %s: %s (%s)\n", h.Decision, h.Time.Local().Format("15:04:05"), h.Why, h.see(v.Plan))
	}
}
