package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/config"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/fsafe"
	"github.com/taskie-dev/taskie/internal/gitwt"
	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/workflow"
)

func newPlanCmd(s *Streams, g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "plan",
		Short: "Create, list and pick plans",
		Long: `Create a plan (plan new), list every plan with where it stands (plan list,
the same table as taskie status --all) and choose the plan that commands act on
when no --plan is given (plan use).`,
	}
	c.AddCommand(newPlanNewCmd(s, g), newPlanListCmd(s, g), newPlanUseCmd(s, g))
	return c
}

// planNewOpts are the options of `taskie plan new`.
type planNewOpts struct {
	s         *Streams
	g         *globals
	id        string
	tdd, auto bool
	asJSON    bool
}

func newPlanNewCmd(s *Streams, g *globals) *cobra.Command {
	return newPlanNewCmdWith(s, g, runPlanNew)
}

func newPlanNewCmdWith(s *Streams, g *globals, run func(*planNewOpts) error) *cobra.Command {
	o := &planNewOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "new <id>",
		Short: "Create a plan: .taskie/plans/<id>/ with plan.md and state.json",
		Long: `Create a plan directory with a plan.md to fill in and a state.json in phase
new-plan. With --auto the Stop hook reviews the plan at the agent's next stop
(automated mode); without it the plan is standalone: nothing runs at the
agent's stops until you ask (taskie review, or taskie done … --auto).
It prints the plan directory (--json: the plan and its state.json).`,
		Args: exactArgs(1, "a plan id"),
		RunE: func(_ *cobra.Command, args []string) error {
			o.id = args[0]
			return run(o)
		},
	}
	c.Flags().BoolVar(&o.tdd, "tdd", false, "implement tasks test-first")
	c.Flags().BoolVar(&o.auto, "auto", false, "automated mode: reviews run at the next stop")
	c.Flags().BoolVar(&o.asJSON, "json", false, "print the plan and its state as JSON")
	return c
}

func runPlanNew(o *planNewOpts) error {
	id := o.id
	if err := plan.ValidID(id); err != nil {
		return usageErr(err, "")
	}
	r, err := repoOrInit(o.g)
	if err != nil {
		return err
	}
	dir, err := r.PlanDir(id)
	if err != nil {
		return usageErr(err, "")
	}
	cfg, err := config.Load(r.TaskieDir())
	if err != nil {
		return usageErr(err, "fix .taskie/config.json (`taskie help config` lists the settings; `taskie config` shows the effective values)")
	}
	fs, err := store.Open(r, o.g.clock())
	if err != nil {
		return err
	}
	defer fs.Close()
	made, err := makePlanDir(fs.Root(), id)
	if err != nil {
		return err
	}
	// A plan new that fails after this leaves no half-made plan, which
	// would become the default and block the id: what it made goes.
	ok := false
	defer func() {
		if !ok {
			_ = fs.Root().RemoveAll(made)
		}
	}()
	p, err := implied.With(fs, id)
	if err != nil {
		return err
	}
	_, st, err := changeWith(p, "plan created", true, func(*store.Snapshot, *state.State) (store.Change, error) {
		return newPlanChange(id, o.tdd, o.auto, cfg), nil
	})
	if err != nil {
		return err
	}
	ok = true
	if o.asJSON {
		return writeJSON(o.s.Out, struct {
			changedView
			Dir string `json:"dir"`
		}{changed(id, st), dir})
	}
	fmt.Fprintf(o.s.Out, "%s\n", dir)
	fmt.Fprintf(o.s.Err, "created plan %s: %s; write the plan in %s\n", id, describeState(st), filepath.Join(dir, "plan.md"))
	return nil
}

// repoOrInit opens the repository, making its project first when it has
// none: in a worktree, in the main checkout, where every worktree finds it.
func repoOrInit(g *globals) (*plan.Repo, error) {
	cwd, err := g.cwd()
	if err != nil {
		return nil, err
	}
	r, err := g.repo()
	if !errors.Is(err, plan.ErrNoTaskie) {
		return r, err
	}
	home := cwd
	if co, _ := gitwt.MainCheckout(cwd); co.Linked && co.Main != "" {
		home = co.Main
	}
	if _, err := initProject(home); err != nil {
		return nil, err
	}
	return g.repo()
}

// newPlanChange is the change that creates plan id: its state.json, an
// empty plan.md and the PLAN_CREATED event.
func newPlanChange(id string, tdd, auto bool, cfg config.Config) store.Change {
	n := state.New()
	n.TDD, n.MaxReviews, n.ReviewModel = tdd, cfg.MaxReviews, workflow.FirstModel(cfg.Models)
	if auto {
		n.NextPhase = state.Opt(domain.PlanReview)
		n.PhaseIteration = state.Int(0)
	}
	return store.Change{State: n, Files: map[string][]byte{"plan.md": []byte("# Plan: " + id + "\n\n")},
		Events: []events.Event{{Event: events.PlanCreated, Actor: "cli", Meta: events.Meta(events.PlanCreatedMeta{TDD: tdd, Auto: auto})}}}
}

// makePlanDir creates the directory of plan id, through the repository
// root so that a .taskie/plans linking out of the repository is refused
// before anything is created; it returns the directory relative to the
// root. An existing directory is the plan's, or a directory that holds no
// plan (a plan new cut short, or made by hand), which is named.
func makePlanDir(root *fsafe.Root, id string) (string, error) {
	rel := store.Rel(id, "")
	err := root.Mkdir(rel, 0o755)
	if !errors.Is(err, fs.ErrExist) {
		return rel, err
	}
	dir := root.Path(rel)
	if _, serr := root.Lstat(store.Rel(id, state.FileName)); serr == nil {
		return "", usageErr(fmt.Errorf("plan %q already exists at %s", id, dir), "pick another id, or continue it with `taskie continue --plan "+id+"`")
	}
	return "", usageErr(fmt.Errorf("plan %q: %s exists but holds no plan (no %s): a `taskie plan new` cut short, or a directory made by hand", id, dir, state.FileName),
		fmt.Sprintf("look inside; if nothing there is yours, remove it (`rm -r %s`) and run `taskie plan new %s` again", dir, id))
}

// changedView is the --json output of a command that changes a plan: the
// plan and its state.json as written.
type changedView struct {
	Plan  string          `json:"plan"`
	State json.RawMessage `json:"state"`
}

func changed(id string, st *state.State) changedView {
	v := changedView{Plan: id, State: json.RawMessage("null")}
	if st != nil {
		v.State = json.RawMessage(st.Encode())
	}
	return v
}

// describeState says in words where a plan stands after a change: its
// phase and what happens next, with no null in sight.
func describeState(st *state.State) string {
	text := "phase " + string(st.Phase)
	switch next := st.Next(); {
	case st.Phase == domain.Complete && next == "":
		text += ", the plan is complete"
	case next == "":
		text += ", standalone (nothing runs at the agent's stops; `taskie review` runs a review now)"
	case domain.IsReview(next):
		text += ", next " + string(next) + " (the hook runs it at the agent's next stop)"
	default:
		text += ", next " + string(next)
	}
	if !st.IsEnabled() {
		text += ", paused"
	}
	return text
}

// planUseOpts are the options of `taskie plan use`.
type planUseOpts struct {
	s      *Streams
	g      *globals
	id     string
	clear  bool
	asJSON bool
}

func newPlanUseCmd(s *Streams, g *globals) *cobra.Command {
	return newPlanUseCmdWith(s, g, runPlanUse)
}

func newPlanUseCmdWith(s *Streams, g *globals, run func(*planUseOpts) error) *cobra.Command {
	o := &planUseOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "use [id]",
		Short: "Set the plan that commands act on when no --plan is given",
		Long: `Set the default plan: every command that takes a plan acts on it when no --plan
is given. Without a default, commands take the most recently changed plan
and, when there are several, say so on stderr. The choice is kept in
.taskie/local/plan, on this machine only (git-ignored). Without an id it prints
the default; --clear goes back to the most recently changed plan.`,
		Example: "  taskie plan use login\n  taskie plan use --clear",
		Args:    maxArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			o.id = firstArg(args)
			if o.clear && o.id != "" {
				return usageErr(errors.New("--clear takes no plan id"), "usage: taskie plan use <id> | taskie plan use --clear")
			}
			return run(o)
		},
	}
	c.Flags().BoolVar(&o.clear, "clear", false, "forget the default: commands take the most recently changed plan")
	c.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")
	return c
}

// defaultView is `taskie plan use --json`.
type defaultView struct {
	Plan string `json:"plan"` // "" when there are no plans
	Set  bool   `json:"set"`  // chosen with taskie plan use
	How  string `json:"how"`
}

func runPlanUse(o *planUseOpts) error {
	r, err := o.g.repo()
	if err != nil {
		return err
	}
	switch {
	case o.clear:
		if err := clearDefault(r); err != nil {
			return err
		}
	case o.id != "":
		p, err := getPlan(r, o.id, o.g.clock())
		if err != nil {
			return err
		}
		if err := writeDefault(r, p.ID); err != nil {
			return err
		}
	}
	id, how, bad, err := pickDefault(r)
	if err != nil {
		return err
	}
	if bad != nil {
		warnDefault(o.s, bad)
	}
	set, _ := readDefault(r)
	v := defaultView{Plan: id, Set: id != "" && id == set, How: how}
	if o.asJSON {
		return writeJSON(o.s.Out, v)
	}
	switch {
	case id == "":
		fmt.Fprintln(o.s.Err, "no plans yet: create one with `taskie plan new <id>`")
	case o.id != "":
		fmt.Fprintf(o.s.Err, "default plan: %s (commands without --plan act on it; `taskie plan use --clear` undoes this)\n", id)
	default:
		fmt.Fprintln(o.s.Out, id)
		fmt.Fprintf(o.s.Err, "default plan: %s (%s)\n", id, how)
	}
	return nil
}

// writeDefault records id as the default plan, in .taskie/local/plan,
// after making sure .taskie/.gitignore keeps local/ out of git. A
// .taskie/local linking out of the repository is refused; a link in the
// file's place is replaced, never written through.
func writeDefault(r *plan.Repo, id string) error {
	root, err := fsafe.Open(r.Root)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := checkLocalDir(root); err != nil {
		return err
	}
	if err := ensureIgnored(root, nil); err != nil {
		return err
	}
	if err := root.MkdirAll(path.Dir(defaultPlanRel), 0o755); err != nil {
		return err
	}
	return root.ReplaceFile(defaultPlanRel, []byte(id+"\n"))
}

// clearDefault removes .taskie/local/plan (a link there itself, not what
// it names) and .taskie/local when that leaves it empty.
func clearDefault(r *plan.Repo) error {
	root, err := fsafe.Open(r.Root)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := checkLocalDir(root); err != nil {
		return err
	}
	if err := root.Remove(defaultPlanRel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	local := path.Dir(defaultPlanRel)
	if entries, err := root.ReadDir(local); err == nil && len(entries) == 0 {
		_ = root.Remove(local)
	}
	return nil
}

// checkLocalDir refuses a symbolic link at .taskie/local: the directory
// holds machine-local files of taskie's own, and a link there (committed to
// a repository, say) would send taskie's writes and removals elsewhere.
func checkLocalDir(root *fsafe.Root) error {
	rel := path.Dir(defaultPlanRel)
	fi, err := root.Lstat(rel)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return nil // missing, or an error the write itself reports
	}
	if _, err := root.Stat(rel); errors.Is(err, fsafe.ErrOutsideRepo) {
		return usageErr(err, "remove the link (`rm "+root.Path(rel)+"`); taskie makes the directory itself")
	}
	return usageErr(fmt.Errorf("%s: a symbolic link where taskie keeps its machine-local files", root.Path(rel)),
		"remove the link (`rm "+root.Path(rel)+"`); taskie makes the directory itself")
}

// phaseLine renders the phase line of `taskie status`: the phase, the
// next phase when there is one, and the mode in words.
func phaseLine(v *statusView) string {
	if !v.HasState {
		return "none yet (no state.json: `taskie continue` says where to start)"
	}
	text := v.Phase
	if v.NextPhase != nil {
		text += " → " + string(*v.NextPhase)
	}
	mode := v.Mode
	if mode == "standalone" {
		mode = "standalone: nothing runs at the agent's stops"
	}
	if v.Paused {
		mode += ", paused"
	}
	return text + " (" + mode + ")"
}
