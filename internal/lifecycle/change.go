package lifecycle

import (
	"bytes"
	"maps"
	"slices"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/state"
)

// Edit is the part of a change of a plan that the lifecycle follows: what
// its command writes, and how it is logged.
type Edit struct {
	Actor, Kind, Reason string
	// State is the state.json the change writes; nil leaves it as it is.
	State *state.State
	// Statuses are the Status cells of tasks.md it writes, by task id.
	Statuses map[domain.TaskID]string
	// Events are the events it logs.
	Events []events.Event
}

// ChangeFacts are the values the following of a change is decided on,
// gathered by the shell.
type ChangeFacts struct {
	Old *state.State // state.json before the change
	// Cells are tasks.md's Status cells before the change, by task id;
	// nil without tasks.md.
	Cells map[domain.TaskID]string
	// Rows are tasks.md's rows, for when each task became ready
	// (Readiness); nil without tasks.md (every task counts from its
	// state's start).
	Rows   []Row
	Review *Review // the review the change records; nil when none
	// OwnCommit is set for a lifecycle command's own commit (`taskie
	// task`): it does what it says and no more, so a task it moves into
	// committing by hand waits there until the next check.
	OwnCommit bool
	Now       time.Time
	Timeouts  Timeouts
	// Head is the repository's HEAD, nil until gathered: FollowChange
	// asks for it (HeadNeed) only when a task enters or waits in
	// committing.
	Head *Head
}

// Head is what the shell found of the repository's HEAD.
type Head struct {
	// Git is false when the project is in no git work tree or git is not
	// installed: every task waiting in committing has its commit then.
	Git bool
	// Commit is HEAD's commit and At its committer time; "" when the
	// repository has no commit yet.
	Commit string
	At     time.Time
	// Descends says, for each commit HeadNeed.Recorded names other than
	// Commit, whether HEAD descends from it (a commit git does not know
	// counts: history was rewritten since).
	Descends map[string]bool
}

// HeadNeed is FollowChange asking for HEAD.
type HeadNeed struct {
	// Stamp is set when a task enters committing: HEAD is remembered on it,
	// so git must be asked (the files of .git alone may not say).
	Stamp bool
	// Recorded are the commits the tasks waiting in committing entered at
	// ("" for a task that entered before any commit): when HEAD is any of
	// them but Commit, Head.Descends must say whether HEAD descends from
	// it. When HEAD is every one of them, no commit was made since.
	Recorded []string
}

// Unmoved reports whether head, read from git's files, is the commit every
// task waiting in committing entered at: no commit was made since, which a
// stop or a commit finds at the cost of a few small reads.
func (n HeadNeed) Unmoved(head string) bool {
	if n.Stamp {
		return false
	}
	for _, r := range n.Recorded {
		if r != head {
			return false
		}
	}
	return true
}

// FollowChange adds to change e, made on the plan f describes, the
// lifecycle moves its plan phases make (docs/lifecycle.md, Follow): the
// tasks' records in the new state.json and one effect per move, the
// Status cells the moves render, the commits seen of the tasks in
// committing and the timeout levels the tasks crossed (TIMEOUT_WARNING).
// The lifecycle never makes a change fail: a move the machine refuses (a
// task under escalation) is left out, and a lifecycle field that does not
// decode is left as it is for `taskie validate` to report.
//
// When it needs HEAD and f.Head is nil it returns e unchanged and says
// what to gather; the shell calls it again with f.Head set.
func FollowChange(f ChangeFacts, e Edit) (Edit, *HeadNeed) {
	orig := e
	if e.State == nil {
		if !movesWithoutState(f, e) {
			return dueWarnings(f, e)
		}
		e.State = f.Old
	}
	cues := Follow(f.Old, e.State, f.Review)
	settle := AwaitsCommit(e.State) && !f.OwnCommit
	if len(cues) == 0 && !settle && len(e.State.Lifecycle) == 0 {
		return e, nil
	}
	before, tasks, ok := decodeRecords(f.Old, e.State)
	if !ok {
		return e, nil
	}
	actor := ActorAgent
	if e.Actor == "hook" {
		actor = ActorHook
	}
	effs, kept := handEdits(before, tasks, f.Cells, e.Statuses, f.Now)
	more, _ := Feed(tasks, cues, actor, f.Now)
	effs, need := followCommits(f, tasks, append(effs, more...), settle, actor)
	if need != nil {
		return orig, need
	}
	effs = append(effs, levelsCrossed(tasks, readiness(f.Rows, tasks), f.Now, f.Timeouts)...)
	return recordMoves(f, orig, e, before, tasks, effs, kept), nil
}

// movesWithoutState reports whether a change that leaves state.json alone
// still moves tasks: a change of Status cells, or any commit while a cell
// edited by hand waits (a task with a record gets its rendering, a hand
// edit its requested move), or a task waiting in committing (its commit
// when it is there: a note written after it completes the task).
// Otherwise only the timeout levels due are added.
func movesWithoutState(f ChangeFacts, e Edit) bool {
	if f.Old == nil || len(f.Old.Lifecycle) == 0 {
		return false
	}
	return len(e.Statuses) > 0 || handEdited(f.Old, f.Cells) || AwaitsCommit(f.Old)
}

// decodeRecords decodes the tasks' records before and after the change;
// ok is false when either does not decode (left for `taskie validate`).
func decodeRecords(old, next *state.State) (before, tasks map[domain.TaskID]Task, ok bool) {
	tasks, err := Decode(next.Lifecycle)
	if err != nil {
		return nil, nil, false
	}
	if old != nil {
		if before, err = Decode(old.Lifecycle); err != nil {
			return nil, nil, false
		}
	}
	return before, tasks, true
}

// followCommits follows the commits of the tasks entering or waiting in
// committing (settle): a task entering remembers HEAD, a task waiting
// completes on its commit. It asks for HEAD when f.Head is nil.
func followCommits(f ChangeFacts, tasks map[domain.TaskID]Task, effs []Effect, settle bool, actor Actor) ([]Effect, *HeadNeed) {
	entering := EntersCommitting(effs)
	if !settle && !entering {
		return effs, nil
	}
	if need := headNeed(tasks, effs, entering); need != nil && f.Head == nil {
		return effs, need
	}
	if entering && f.Head.Git {
		// Remember HEAD: the task's commit is one made after it.
		StampHead(tasks, effs, f.Head.Commit)
	}
	more, _ := Feed(tasks, CommitsSeen(tasks, f.Head), actor, f.Now)
	return append(effs, more...), nil
}

// recordMoves writes the moves into the change: the Status cells they
// render, the records, one event per effect, and the change's kind when
// the lifecycle alone makes it.
func recordMoves(f ChangeFacts, orig, e Edit, before, tasks map[domain.TaskID]Task, effs []Effect, kept map[domain.TaskID]bool) Edit {
	statuses, restated := render(before, tasks, f.Cells, e.Statuses, kept)
	if restated {
		e.Statuses = statuses
	}
	if len(effs) == 0 && (!restated || orig.State == nil && len(statuses) == 0) {
		return orig
	}
	if orig.State == nil && e.Kind == "" {
		e.Kind = events.LifecycleCommit
		if len(e.Statuses) > 0 && len(effs) == 0 {
			e.Kind = events.TaskStatus
		}
	}
	if len(effs) == 0 {
		return e
	}
	n := e.State.Clone()
	n.Lifecycle = Encode(tasks)
	e.State = n
	e.Events = append(slices.Clone(e.Events), Events(effs)...)
	return e
}

// headNeed says what of HEAD following needs: nil when no task enters or
// waits in committing.
func headNeed(tasks map[domain.TaskID]Task, effs []Effect, entering bool) *HeadNeed {
	ids := AwaitingCommit(tasks)
	if len(ids) == 0 && !entering {
		return nil
	}
	var stamped map[domain.TaskID]bool
	if entering {
		stamped = entered(effs)
	}
	need := &HeadNeed{Stamp: entering}
	for _, id := range ids {
		if !stamped[id] {
			need.Recorded = append(need.Recorded, tasks[id].Head)
		}
	}
	return need
}

// dueWarnings adds the TIMEOUT_WARNINGs due to a change that leaves
// state.json alone (a progress note, a review file): it writes anyway, so
// the levels crossed since are logged now, with the records they update —
// not only at the next phase or lifecycle move. A plan without records
// costs nothing.
func dueWarnings(f ChangeFacts, e Edit) (Edit, *HeadNeed) {
	if f.Old == nil || len(f.Old.Lifecycle) == 0 {
		return e, nil
	}
	tasks, err := Decode(f.Old.Lifecycle)
	if err != nil {
		return e, nil
	}
	effs := levelsCrossed(tasks, readiness(f.Rows, tasks), f.Now, f.Timeouts)
	if len(effs) == 0 {
		return e, nil
	}
	n := f.Old.Clone()
	n.Lifecycle = Encode(tasks)
	e.State = n
	e.Events = append(slices.Clone(e.Events), Events(effs)...)
	return e, nil
}

// CommitsSeen cues commit-seen for the tasks in committing whose commit
// exists: any task when the repository is no git repository (or git is
// not installed); otherwise a task whose HEAD moved on since it entered
// committing (CommitDue). state.json's last_commit plays no part: taskie
// never writes it (a task's worktree keeps its own in the worktree
// record), and the HEAD each task remembers says more. head is nil only
// when no task waits in committing.
func CommitsSeen(tasks map[domain.TaskID]Task, head *Head) []Cue {
	ids := AwaitingCommit(tasks)
	if len(ids) == 0 || head == nil {
		return nil
	}
	descends := func(c string) bool { return head.Descends[c] }
	var cues []Cue
	for _, id := range ids {
		if !head.Git || CommitDue(tasks[id], head.Commit, head.At, descends) {
			cues = append(cues, Cue{Task: id, Event: CommitSeen})
		}
	}
	return cues
}

// NeedsHead is HeadNeed for a read of the records (no change): nil when
// no task waits in committing.
func NeedsHead(tasks map[domain.TaskID]Task) *HeadNeed {
	return headNeed(tasks, nil, false)
}

// AwaitsCommit reports, without decoding the records, whether some task
// may be in committing: the cheap test that keeps git out of every commit
// and every stop while no task waits for its commit.
func AwaitsCommit(st *state.State) bool {
	return st != nil && bytes.Contains(st.Lifecycle, []byte(`"committing"`))
}

// handEdited reports whether some Status cell of tasks.md does not render
// its task's record in st.
func handEdited(st *state.State, cells map[domain.TaskID]string) bool {
	recs, err := Decode(st.Lifecycle)
	return err == nil && len(Divergences(recs, cells)) > 0
}

// handEdits reads the Status cells that do not render their task's record
// (before the change) as requested moves, made as the agent (docs/
// lifecycle.md, "tasks.md's Status"): in tasks, changed in place, with
// their effects. A cell the change writes itself, or of a task the change
// moves, is the change's to decide. A move the machine refuses leaves
// the cell as it is — kept, never overwritten, reported by `validate` and
// `status` until someone acts.
func handEdits(before, tasks map[domain.TaskID]Task, onDisk, explicit map[domain.TaskID]string, now time.Time) ([]Effect, map[domain.TaskID]bool) {
	var effs []Effect
	var kept map[domain.TaskID]bool
	for _, d := range Divergences(before, onDisk) {
		if _, ok := explicit[d.Task]; ok {
			continue
		}
		t, ok := tasks[d.Task]
		if !ok || t.State != before[d.Task].State || !t.Since.Equal(before[d.Task].Since) {
			continue
		}
		next, es, err := Request(t, d.Cell, ActorAgent, "tasks.md says "+d.Cell+" (edited by hand)", now)
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
// its state (Cell) — a cell the change asks for, or tasks.md holds, stays
// when it renders that state too (postponed for pending). Cells kept as
// hand edits are not written. restated is false when that changes nothing.
func render(before, tasks map[domain.TaskID]Task, onDisk, explicit map[domain.TaskID]string, kept map[domain.TaskID]bool) (map[domain.TaskID]string, bool) {
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
		want := Cell(t.State)
		if want == "" {
			continue
		}
		if e, ok := explicit[id]; ok && Agrees(t.State, e) {
			want = e
		} else if d, ok := onDisk[id]; ok && !named && Agrees(t.State, d) {
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

// levelsCrossed adds to the records, and returns, a TIMEOUT_WARNING for
// each timeout level a task crossed in its state and that no earlier
// commit logged (ReadyAt.TimeoutWarnings), by task id: every commit logs
// the levels crossed since, so the log says when a task got stuck without
// anything written between commands. A pending task counts from when it
// became ready (ready); a queued one gets none.
func levelsCrossed(tasks map[domain.TaskID]Task, ready ReadyAt, now time.Time, timeouts Timeouts) []Effect {
	ids := make([]domain.TaskID, 0, len(tasks))
	for id := range tasks {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var effs []Effect
	for _, id := range ids {
		if t, es, err := ready.TimeoutWarnings(tasks[id], now, timeouts); err == nil && len(es) > 0 {
			tasks[id] = t
			effs = append(effs, es...)
		}
	}
	return effs
}

// readiness is Readiness, nil without tasks.md.
func readiness(rows []Row, records map[domain.TaskID]Task) ReadyAt {
	if rows == nil {
		return nil
	}
	return Readiness(rows, records)
}

// Events turns lifecycle effects into the events that record them: the
// effect's kind as the event, its task, states, actor, reason, time, and
// its meta (action, note, failures, cto_attempts) when set.
func Events(effs []Effect) []events.Event {
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
