package cli

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/parallel"
)

// readyOpts are the options of `taskie ready`.
type readyOpts struct {
	s      *Streams
	g      *globals
	plan   string
	asJSON bool
}

// readyView is one ready task on stdout with --json.
type readyView struct {
	Task     string        `json:"task"`
	Priority string        `json:"priority"`
	Status   string        `json:"status"`
	Title    string        `json:"title,omitempty"`
	Files    []string      `json:"files"`
	Expired  *previousView `json:"expired_claim,omitempty"` // a lease that lapsed: claiming takes it over
}

func newReadyCmd(s *Streams, g *globals) *cobra.Command { return newReadyCmdWith(s, g, runReady) }

func newReadyCmdWith(s *Streams, g *globals, run func(*readyOpts) error) *cobra.Command {
	o := &readyOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "ready [plan] [--json]",
		Short: "List the tasks that can start now, in priority order",
		Long: `List the tasks that can start now: every dependency done (or cancelled), not
done, and not claimed — pending tasks without a live lease, and in-progress
tasks whose lease expired (claiming one takes it over); an in-progress task
without a claim is someone's work under way, not ready, unless its latest
result failed and it awaits its retry. Tasks recorded in failed_tasks and
tasks whose result is complete (waiting to be merged) are left out. Order: the priority a task inherits from the tasks waiting on it,
its own priority, its id — the order ` + "`taskie claim --next`" + ` takes them in.

Output: one task per line: task, priority, status, title, files,
expired_claim (the holder of a lapsed lease). Aligned on a terminal; piped,
a header of these --json keys then tab-separated columns.`,
		Args: maxArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			o.plan = firstArg(args)
			return run(o)
		},
	}
	c.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")
	return c
}

func runReady(o *readyOpts) error {
	lazyGC()
	s := o.s
	cp, err := o.g.openCoord(o.plan)
	if err != nil {
		return err
	}
	defer cp.close()
	tasks, problems, err := cp.schedTasks(false)
	if err != nil {
		return err
	}
	for _, p := range problems {
		fmt.Fprintf(s.Err, "taskie: warning: %s\n", p.Msg)
	}
	claims, err := cp.c.Claims(cp.ctx, cp.key)
	if err != nil {
		return err
	}
	now, err := cp.now()
	if err != nil {
		return err
	}
	ready, err := cp.readyTasks(tasks, claims, now)
	if err != nil {
		return err
	}
	if err := cp.withFiles(ready); err != nil {
		return err
	}
	if err := cp.refuseIfPaused(); err != nil {
		fmt.Fprintf(s.Err, "taskie: warning: %v; none of these can be claimed until `taskie resume`\n", err)
	}
	views := readyViews(ready, claims, cp.titles(), now)
	if o.asJSON {
		return writeJSON(s.Out, views)
	}
	if err := printReady(s, views); err != nil {
		return err
	}
	if len(views) == 0 {
		fmt.Fprintf(s.Err, "plan %s: no task is ready\n", cp.p.ID)
	}
	return nil
}

func readyViews(ready []parallel.Task, claims []parallel.Claim, titles map[domain.TaskID]string, now time.Time) []readyView {
	held := map[domain.TaskID]parallel.Claim{}
	for _, c := range claims {
		held[c.Task] = c
	}
	out := make([]readyView, len(ready))
	for i, t := range ready {
		v := readyView{Task: t.ID.String(), Title: titles[t.ID], Status: t.Status,
			Priority: parallel.PriorityName(t.Priority), Files: t.Files}
		if v.Files == nil {
			v.Files = []string{}
		}
		if c, ok := held[t.ID]; ok && !c.Live(now) {
			v.Expired = &previousView{Agent: c.Agent, Expires: c.Expires}
		}
		out[i] = v
	}
	return out
}

func printReady(s *Streams, views []readyView) error {
	t := table{cols: []string{"task", "priority", "status", "title", "files", "expired_claim"},
		paint: func(p palette, row, col int, cell string) string {
			if col == 5 && cell != "-" {
				return p.Yellow(cell)
			}
			return cell
		}}
	return t.print(s, len(views), func(i int, tty bool) []string {
		v := views[i]
		expired := "-"
		if v.Expired != nil {
			expired = v.Expired.Agent
			if tty {
				expired = "lease of " + v.Expired.Agent + " expired"
			}
		}
		return []string{v.Task, v.Priority, v.Status, orNone(v.Title), listCell(v.Files), expired}
	})
}

// lazyGCLimit is the heap a plan read grows to before its first
// collection (docs/performance.md, "Big plans").
const lazyGCLimit = 32 << 20

// lazyGC leaves the garbage collector off until the heap reaches
// lazyGCLimit, then sets it back as it was: a read of a big plan keeps
// most of what it allocates to its end, so the collections before that
// free little (a seventh of reading 10,000 tasks), and a plan too big for
// the limit pays one collection more, never a collector held at the
// limit. GOGC or GOMEMLIMIT set by the user win; a process that runs
// commands in turn (the tests) does it once.
func lazyGC() { lazyGCOnce.Do(lazyGCStart) }

var lazyGCOnce sync.Once

func lazyGCStart() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	type setting struct {
		pct   int
		limit int64
	}
	old := setting{debug.SetGCPercent(-1), debug.SetMemoryLimit(-1)}
	debug.SetMemoryLimit(lazyGCLimit)
	// Unreachable at once, so the first collection runs its cleanup.
	first := new([2]*int)
	runtime.AddCleanup(first, func(old setting) {
		debug.SetGCPercent(old.pct)
		debug.SetMemoryLimit(old.limit)
	}, old)
}
