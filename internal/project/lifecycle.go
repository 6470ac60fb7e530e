package project

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
)

// follow adds to a change the lifecycle moves its plan phases make (SPEC
// §10, lifecycle.Follow): the tasks' records in the new state.json and one
// event per effect, before the commit event. It runs in every commit, so
// no command can move the phases without the lifecycle following; when
// the phases do not move a task it decodes nothing. The lifecycle never
// makes a change fail: a move the machine refuses (a task under
// escalation) is left out, and a lifecycle field that does not decode is
// left as it is for `taskie validate` to report.
func (p *Plan) follow(s *store.Snapshot, c store.Change) store.Change {
	if c.State == nil || c.Replace {
		return c
	}
	cues := lifecycle.Follow(s.State, c.State, reviewOf(c.Events))
	if len(cues) == 0 {
		return c
	}
	tasks, err := lifecycle.Decode(c.State.Lifecycle)
	if err != nil {
		return c
	}
	now := p.Store.Now().UTC()
	actor := lifecycle.ActorAgent
	if c.Actor == "hook" {
		actor = lifecycle.ActorHook
	}
	effs, _ := lifecycle.Feed(tasks, cues, actor, now)
	more, _ := lifecycle.Feed(tasks, p.commitsSeen(tasks, c.State), actor, now)
	effs = append(effs, more...)
	if len(effs) == 0 {
		return c
	}
	n := c.State.Clone()
	n.Lifecycle = lifecycle.Encode(tasks)
	c.State = n
	c.Events = append(slices.Clone(c.Events), LifecycleEvents(effs)...)
	return c
}

// reviewOf finds the review a change records: its REVIEW_FINISHED event,
// unless the hook logged the verdict as not recorded.
func reviewOf(evs []events.Event) *lifecycle.Review {
	for _, e := range evs {
		if e.Event != events.ReviewFinished {
			continue
		}
		if rec, ok := e.Meta["recorded"].(bool); ok && !rec {
			continue
		}
		id, err := domain.ParseTaskID(e.Task)
		if err != nil {
			continue
		}
		kind, _ := e.Meta["review"].(string)
		verdict, _ := e.Meta["verdict"].(string)
		return &lifecycle.Review{Task: id, Kind: domain.Phase(kind), Verdict: domain.Verdict(verdict)}
	}
	return nil
}

// commitsSeen cues commit-seen for the tasks in committing whose commit
// exists: the plan's current task when state.json's last_commit moved
// past base_sha (a worktree's task); any task when the repository is no
// git repository (or git is not installed); otherwise a task whose
// lifecycle began before the repository's newest commit. git is asked
// only here, when a task awaits its commit.
func (p *Plan) commitsSeen(tasks map[domain.TaskID]lifecycle.Task, cur *state.State) []lifecycle.Cue {
	ids := lifecycle.AwaitingCommit(tasks)
	if len(ids) == 0 {
		return nil
	}
	moved := cur.LastCommit != "" && cur.LastCommit != cur.BaseSHA
	at, isGit := newestCommit(p.Repo.Root)
	var cues []lifecycle.Cue
	for _, id := range ids {
		if !isGit || (moved && id == cur.Task()) || lifecycle.CommitCounts(tasks[id], at) {
			cues = append(cues, lifecycle.Cue{Task: id, Event: lifecycle.CommitSeen})
		}
	}
	return cues
}

// newestCommit returns the committer time of HEAD in the repository at
// root; isGit is false when root is in no git work tree or git is not
// installed. A repository without commits has the zero time.
func newestCommit(root string) (at time.Time, isGit bool) {
	if !inGit(root) {
		return time.Time{}, false
	}
	if _, err := exec.LookPath("git"); err != nil {
		return time.Time{}, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "-C", root, "log", "-1", "--format=%ct").Output()
	if err != nil {
		return time.Time{}, true
	}
	sec, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return time.Time{}, true
	}
	return time.Unix(sec, 0).UTC(), true
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
