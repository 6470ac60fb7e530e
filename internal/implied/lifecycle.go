package implied

import (
	"bytes"
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/gitwt"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/taskrec"
)

// follow adds to a change the lifecycle moves its plan phases make
// (docs/lifecycle.md, lifecycle.Follow): the tasks' records in the new state.json and one
// event per effect, before the commit event. It runs in every commit, so
// no command can move the phases without the lifecycle following, and
// every commit also completes the tasks in committing whose commit is
// there and logs the timeout levels the tasks crossed (TIMEOUT_WARNING). When the phases move no task and none is in committing it
// decodes nothing. The lifecycle never makes a change fail: a move the
// machine refuses (a task under escalation) is left out, and a lifecycle
// field that does not decode is left as it is for `taskie validate` to
// report.
func follow(p *store.Plan, s *store.Snapshot, c store.Change) store.Change {
	if c.Replace {
		return c
	}
	orig := c
	if c.State == nil {
		// A change of Status cells, or any commit while a cell edited by
		// hand waits: a task with a record gets its rendering, a hand edit
		// its requested move; a task waiting in committing, its commit
		// when it is there (a note written after it completes the task).
		// Otherwise only the timeout levels due.
		if s.State == nil || len(s.State.Lifecycle) == 0 || (len(c.Statuses) == 0 && !handEdited(s) && !awaitsCommit(s.State)) {
			return dueWarnings(p, s, c)
		}
		c.State = s.State
	}
	cues := lifecycle.Follow(s.State, c.State, reviewOf(c.Events))
	// A `taskie task` command's own commit does what it says and no more:
	// a task moved into committing by hand stays there until the next check.
	settle := awaitsCommit(c.State) && (c.Kind != events.LifecycleCommit || c.Reason == commitSeenReason)
	if len(cues) == 0 && !settle && len(c.State.Lifecycle) == 0 {
		return c
	}
	tasks, err := taskrec.Records(c.State)
	if err != nil {
		return c
	}
	var before map[domain.TaskID]lifecycle.Task
	if s.State != nil {
		if before, err = taskrec.Records(s.State); err != nil {
			return c
		}
	}
	now := p.Store.Now().UTC()
	actor := lifecycle.ActorAgent
	if c.Actor == "hook" {
		actor = lifecycle.ActorHook
	}
	onDisk := statusCells(s)
	effs, kept := handEdits(before, tasks, onDisk, c.Statuses, now)
	more, _ := lifecycle.Feed(tasks, cues, actor, now)
	effs = append(effs, more...)
	var g *gitHead
	if lifecycle.EntersCommitting(effs) {
		// Remember HEAD: the task's commit is one made after it.
		if g = head(p); g.isGit {
			lifecycle.StampHead(tasks, effs, g.sha)
		}
	}
	if settle || lifecycle.EntersCommitting(effs) {
		more, _ := lifecycle.Feed(tasks, commitsSeen(p, tasks, c.State, g), actor, now)
		effs = append(effs, more...)
	}
	effs = append(effs, timeoutWarnings(tasks, taskrec.Readiness(s.Tasks, tasks), now, timeouts(p))...)
	statuses, restated := render(before, tasks, onDisk, c.Statuses, kept)
	if restated {
		c.Statuses = statuses
	}
	if len(effs) == 0 && (!restated || orig.State == nil && len(statuses) == 0) {
		return orig
	}
	if orig.State == nil && c.Kind == "" {
		c.Kind = events.LifecycleCommit
		if len(c.Statuses) > 0 && len(effs) == 0 {
			c.Kind = events.TaskStatus
		}
	}
	if len(effs) == 0 {
		return c
	}
	n := c.State.Clone()
	n.Lifecycle = lifecycle.Encode(tasks)
	c.State = n
	c.Events = append(slices.Clone(c.Events), LifecycleEvents(effs)...)
	return c
}

// dueWarnings adds the TIMEOUT_WARNINGs due to a change that leaves
// state.json alone (a progress note, a review file): it writes anyway, so
// the levels crossed since are logged now, with the records they update —
// not only at the next phase or lifecycle move. A plan without records
// costs nothing.
func dueWarnings(p *store.Plan, s *store.Snapshot, c store.Change) store.Change {
	if s == nil || s.State == nil || len(s.State.Lifecycle) == 0 {
		return c
	}
	tasks, err := taskrec.Records(s.State)
	if err != nil {
		return c
	}
	effs := timeoutWarnings(tasks, taskrec.Readiness(s.Tasks, tasks), p.Store.Now().UTC(), timeouts(p))
	if len(effs) == 0 {
		return c
	}
	n := s.State.Clone()
	n.Lifecycle = lifecycle.Encode(tasks)
	c.State = n
	c.Events = append(slices.Clone(c.Events), LifecycleEvents(effs)...)
	return c
}

// handEdited reports whether some Status cell of tasks.md does not render
// its task's record in the snapshot.
func handEdited(s *store.Snapshot) bool {
	recs, err := taskrec.Records(s.State)
	return err == nil && len(lifecycle.Divergences(recs, statusCells(s))) > 0
}

// statusCells are tasks.md's Status cells as the snapshot read them, by
// task id; nil without tasks.md.
func statusCells(s *store.Snapshot) map[domain.TaskID]string { return taskrec.Cells(s.Tasks) }

// handEdits reads the Status cells that do not render their task's record
// (before the change) as requested moves, made as the agent (docs/
// lifecycle.md, "tasks.md's Status"): in tasks, changed in place, with
// their effects. A cell the change writes itself, or of a task the change
// moves, is the change's to decide. A move the machine refuses leaves
// the cell as it is — kept, never overwritten, reported by `validate` and
// `status` until someone acts.
func handEdits(before, tasks map[domain.TaskID]lifecycle.Task, onDisk, explicit map[domain.TaskID]string, now time.Time) ([]lifecycle.Effect, map[domain.TaskID]bool) {
	var effs []lifecycle.Effect
	var kept map[domain.TaskID]bool
	for _, d := range lifecycle.Divergences(before, onDisk) {
		if _, ok := explicit[d.Task]; ok {
			continue
		}
		t, ok := tasks[d.Task]
		if !ok || t.State != before[d.Task].State || !t.Since.Equal(before[d.Task].Since) {
			continue
		}
		next, es, err := lifecycle.Request(t, d.Cell, lifecycle.ActorAgent, "tasks.md says "+d.Cell+" (edited by hand)", now)
		if err != nil {
			if kept == nil {
				kept = map[domain.TaskID]bool{}
			}
			kept[d.Task] = true
			continue
		}
		tasks[d.Task] = next
		effs = append(effs, es...)
	}
	return effs, kept
}

// render returns the Status cells a change writes: its own, and for every
// task with a record that the change moved or created, the rendering of
// its state (lifecycle.Cell) — a cell the change asks for, or
// tasks.md holds, stays when it renders that state too (postponed for
// pending). Cells kept as hand edits are not written. restated is false
// when that changes nothing.
func render(before, tasks map[domain.TaskID]lifecycle.Task, onDisk, explicit map[domain.TaskID]string, kept map[domain.TaskID]bool) (map[domain.TaskID]string, bool) {
	var out map[domain.TaskID]string
	set := func(id domain.TaskID, cell string) {
		if cur, ok := explicit[id]; ok && cur == cell {
			return
		}
		if out == nil {
			out = maps.Clone(explicit)
			if out == nil {
				out = map[domain.TaskID]string{}
			}
		}
		out[id] = cell
	}
	for id, t := range tasks {
		b, had := before[id]
		_, named := explicit[id]
		if kept[id] || (had && b.State == t.State) {
			// Not moved: a cell the change names is its command's own
			// decision (a retry sets pending), reported when it differs.
			continue
		}
		want := lifecycle.Cell(t.State)
		if want == "" {
			continue
		}
		if e, ok := explicit[id]; ok && lifecycle.Agrees(t.State, e) {
			want = e
		} else if d, ok := onDisk[id]; ok && !named && lifecycle.Agrees(t.State, d) {
			want = d
		}
		if _, ok := onDisk[id]; !ok && !named {
			continue // no row in tasks.md to write
		}
		set(id, want)
	}
	if out == nil {
		return explicit, false
	}
	return out, true
}

// timeoutWarnings adds to the records, and returns, a TIMEOUT_WARNING for
// each timeout level a task crossed in its state and that no earlier
// commit logged (lifecycle.TimeoutWarnings), by task id: every commit
// logs the levels crossed since, so the log says when a task got stuck
// without anything written between commands. A pending task counts from
// when it became ready (ready); a queued one gets none.
func timeoutWarnings(tasks map[domain.TaskID]lifecycle.Task, ready lifecycle.ReadyAt, now time.Time, timeouts lifecycle.Timeouts) []lifecycle.Effect {
	ids := make([]domain.TaskID, 0, len(tasks))
	for id := range tasks {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var effs []lifecycle.Effect
	for _, id := range ids {
		if t, es, err := ready.TimeoutWarnings(tasks[id], now, timeouts); err == nil && len(es) > 0 {
			tasks[id] = t
			effs = append(effs, es...)
		}
	}
	return effs
}

// timeouts are the configured lifecycle timeouts, the defaults when the
// configuration does not read (status says so).
func timeouts(p *store.Plan) lifecycle.Timeouts {
	if cfg, err := Config(p); err == nil {
		if t, err := lifecycle.ParseTimeouts(cfg.LifecycleTimeouts); err == nil {
			return t
		}
	}
	return lifecycle.DefaultTimeouts()
}

// awaitsCommit reports, without decoding the records, whether some task
// may be in committing: the cheap test that keeps git out of every commit
// and every stop while no task waits for its commit.
func awaitsCommit(st *state.State) bool {
	return st != nil && bytes.Contains(st.Lifecycle, []byte(`"committing"`))
}

// SettleCommits completes the tasks waiting in committing whose commit is
// there, in a commit of its own (actor as the change's actor: "hook" for
// the Stop hook). The last task of a plan has no later phase move to be
// completed at, so the hook and the lifecycle queries call it. It costs
// nothing when no record is in committing, and writes only when a commit
// is seen.
func SettleCommits(p *store.Plan, actor string) error {
	s, err := p.Snapshot()
	if err != nil || s.State == nil || !awaitsCommit(s.State) {
		return nil
	}
	tasks, err := taskrec.Records(s.State)
	if err != nil || len(commitsSeen(p, tasks, s.State, nil)) == 0 {
		return nil
	}
	// follow makes the moves, under the plan lock, on the state then.
	return p.Update(func(snap *store.Snapshot) (store.Change, error) {
		if snap.State == nil {
			return store.Change{}, nil
		}
		return store.Change{Actor: actor, Reason: commitSeenReason, Kind: events.LifecycleCommit, State: snap.State.Clone()}, nil
	})
}

// SettledView completes in memory, in tasks (lifecycle records, changed in
// place), the tasks waiting in committing whose commit is there, and
// returns the events completing them logs: what a read (status, query)
// shows without writing. The next commit, or the Stop hook's
// SettleCommits, writes it.
func SettledView(p *store.Plan, tasks map[domain.TaskID]lifecycle.Task) []events.Event {
	cues := commitsSeen(p, tasks, nil, nil)
	if len(cues) == 0 {
		return nil
	}
	effs, _ := lifecycle.Feed(tasks, cues, lifecycle.ActorAgent, p.Store.Now().UTC())
	return LifecycleEvents(effs)
}

// headUnmoved reports, from git's files alone (no git process), that HEAD
// is still the commit every task in ids (those waiting in committing)
// entered it at: the common case at a stop or a commit, which then costs a
// few small reads.
func headUnmoved(root string, tasks map[domain.TaskID]lifecycle.Task, ids []domain.TaskID) bool {
	head, ok := gitwt.HeadFromFiles(root)
	if !ok {
		return false
	}
	for _, id := range ids {
		if tasks[id].Head != head {
			return false
		}
	}
	return true
}

// commitSeenReason is the reason of SettleCommits' commit.
const commitSeenReason = "commit seen"

// reviewOf finds the review a change records: its REVIEW_FINISHED event,
// unless the hook logged the verdict as not recorded.
func reviewOf(evs []events.Event) *lifecycle.Review {
	for _, e := range evs {
		if e.Event != events.ReviewFinished {
			continue
		}
		m, _ := events.MetaOf[events.ReviewFinishedMeta](e)
		if m.NotRecorded() {
			continue
		}
		id, err := domain.ParseTaskID(e.Task)
		if err != nil {
			continue
		}
		return &lifecycle.Review{Task: id, Kind: domain.Phase(m.Review), Verdict: domain.Verdict(m.Verdict)}
	}
	return nil
}

// commitsSeen cues commit-seen for the tasks in committing whose commit
// exists: any task when the repository is no git repository (or git is
// not installed); otherwise a task whose HEAD moved on since it entered
// committing (lifecycle.CommitDue). state.json's last_commit plays no
// part: taskie never writes it (a task's worktree keeps its own in the
// worktree record), and the HEAD each task remembers says more. git is
// asked only here, when a task awaits its commit; g is HEAD when known
// already.
func commitsSeen(p *store.Plan, tasks map[domain.TaskID]lifecycle.Task, cur *state.State, g *gitHead) []lifecycle.Cue {
	ids := lifecycle.AwaitingCommit(tasks)
	if len(ids) == 0 {
		return nil
	}
	if g == nil {
		if headUnmoved(p.Repo.Root, tasks, ids) {
			return nil
		}
		g = head(p)
	}
	var cues []lifecycle.Cue
	for _, id := range ids {
		if !g.isGit || lifecycle.CommitDue(tasks[id], g.sha, g.at, g.descends) {
			cues = append(cues, lifecycle.Cue{Task: id, Event: lifecycle.CommitSeen})
		}
	}
	return cues
}

// gitHead is the repository's HEAD: its commit and committer time (empty
// when the repository has no commit); isGit is false when the project is
// in no git work tree or git is not installed.
type gitHead struct {
	root  string
	sha   string
	at    time.Time
	isGit bool
}

// head asks git for HEAD.
func head(p *store.Plan) *gitHead {
	g := &gitHead{root: p.Repo.Root}
	if !inGit(g.root) {
		return g
	}
	if _, err := exec.LookPath("git"); err != nil {
		return g
	}
	g.isGit = true
	out, err := git(g.root, "log", "-1", "--format=%H %ct")
	if err != nil {
		return g // no commit yet
	}
	sha, ct, ok := strings.Cut(out, " ")
	sec, err := strconv.ParseInt(ct, 10, 64)
	if !ok || err != nil {
		return g
	}
	g.sha, g.at = sha, time.Unix(sec, 0).UTC()
	return g
}

// descends reports whether HEAD descends from commit c. A commit git does
// not know (history rewritten since) counts: HEAD moved on.
func (g *gitHead) descends(c string) bool {
	_, err := git(g.root, "merge-base", "--is-ancestor", c, "HEAD")
	return gitwt.ExitCode(err) != 1
}

// git runs git in root with a deadline.
func git(root string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return gitwt.Run(ctx, root, args...)
}

// inGit reports whether dir or a directory above it holds .git.
func inGit(dir string) bool {
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return true
		}
		up := filepath.Dir(dir)
		if up == dir {
			return false
		}
		dir = up
	}
}

// LifecycleEvents turns lifecycle effects into the events that record
// them: the effect's kind as the event, its task, states, actor, reason,
// time, and its meta (action, note, failures, cto_attempts) when set.
func LifecycleEvents(effs []lifecycle.Effect) []events.Event {
	out := make([]events.Event, len(effs))
	for i, e := range effs {
		out[i] = events.Event{TS: e.At.UTC(), Task: e.Task.String(), Event: string(e.Kind), From: string(e.From), To: string(e.To),
			Actor: string(e.Actor), Reason: e.Reason}
		if m := e.Meta.Map(); len(m) > 0 {
			out[i].Meta = m
		}
	}
	return out
}
