package implied

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/gitwt"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/taskrec"
)

// follow adds to a change the lifecycle moves its plan phases make
// (lifecycle.FollowChange, docs/lifecycle.md). It runs in every commit, so
// no command can move the phases without the lifecycle following, and
// every commit also completes the tasks in committing whose commit is
// there and logs the timeout levels the tasks crossed. It gathers the
// facts; HEAD only when the lifecycle asks for it (a task enters or waits
// in committing).
func follow(p *store.Plan, s *store.Snapshot, c store.Change) store.Change {
	if c.Replace {
		return c
	}
	f := lifecycle.ChangeFacts{
		Old:       s.State,
		Review:    reviewOf(c.Events),
		OwnCommit: c.Kind == events.LifecycleCommit && c.Reason != commitSeenReason,
		Now:       p.Store.Now().UTC(),
	}
	if hasRecords(s, c) || len(lifecycle.Follow(s.State, c.State, f.Review)) > 0 {
		// Some task has or gets a record: the lifecycle may read tasks.md
		// and the timeouts.
		f.Cells, f.Rows, f.Timeouts = taskrec.Cells(s.Tasks), taskrec.Rows(s.Tasks), timeouts(p)
	}
	e := lifecycle.Edit{Actor: c.Actor, Kind: c.Kind, Reason: c.Reason, State: c.State, Statuses: c.Statuses, Events: c.Events}
	out, need := lifecycle.FollowChange(f, e)
	if need != nil {
		f.Head = gatherHead(p.Repo.Root, need)
		out, _ = lifecycle.FollowChange(f, e)
	}
	c.Kind, c.State, c.Statuses, c.Events = out.Kind, out.State, out.Statuses, out.Events
	return c
}

// hasRecords reports whether the plan before or after change c holds
// lifecycle records.
func hasRecords(s *store.Snapshot, c store.Change) bool {
	return s.State != nil && len(s.State.Lifecycle) > 0 || c.State != nil && len(c.State.Lifecycle) > 0
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

// SettleCommits completes the tasks waiting in committing whose commit is
// there, in a commit of its own (actor as the change's actor: "hook" for
// the Stop hook). The last task of a plan has no later phase move to be
// completed at, so the hook and the lifecycle queries call it. It costs
// nothing when no record is in committing, and writes only when a commit
// is seen.
func SettleCommits(p *store.Plan, actor string) error {
	s, err := p.Snapshot()
	if err != nil || s.State == nil || !lifecycle.AwaitsCommit(s.State) {
		return nil
	}
	tasks, err := taskrec.Records(s.State)
	if err != nil || len(commitsSeen(p, tasks)) == 0 {
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
	cues := commitsSeen(p, tasks)
	if len(cues) == 0 {
		return nil
	}
	effs, _ := lifecycle.Feed(tasks, cues, lifecycle.ActorAgent, p.Store.Now().UTC())
	return lifecycle.Events(effs)
}

// commitsSeen cues commit-seen for the tasks in committing whose commit
// exists (lifecycle.CommitsSeen), asking git only when some task waits.
func commitsSeen(p *store.Plan, tasks map[domain.TaskID]lifecycle.Task) []lifecycle.Cue {
	need := lifecycle.NeedsHead(tasks)
	if need == nil {
		return nil
	}
	return lifecycle.CommitsSeen(tasks, gatherHead(p.Repo.Root, need))
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

// gatherHead finds what need asks of HEAD in the project at root: from
// git's files alone (no git process) when HEAD is still the commit every
// waiting task entered committing at — the common case at a stop or a
// commit — otherwise from git: HEAD's commit and committer time, and
// whether HEAD descends from each commit a task entered at. Git is false
// when root is in no git work tree or git is not installed.
func gatherHead(root string, need *lifecycle.HeadNeed) *lifecycle.Head {
	if sha, ok := headUnmoved(root, need); ok {
		return &lifecycle.Head{Git: true, Commit: sha}
	}
	h := &lifecycle.Head{}
	if !inGit(root) {
		return h
	}
	if _, err := exec.LookPath("git"); err != nil {
		return h
	}
	h.Git = true
	out, err := git(root, "log", "-1", "--format=%H %ct")
	if err != nil {
		return h // no commit yet
	}
	sha, ct, ok := strings.Cut(out, " ")
	sec, err := strconv.ParseInt(ct, 10, 64)
	if !ok || err != nil {
		return h
	}
	h.Commit, h.At = sha, time.Unix(sec, 0).UTC()
	for _, r := range need.Recorded {
		if r == "" || r == sha {
			continue
		}
		if _, done := h.Descends[r]; done {
			continue
		}
		if h.Descends == nil {
			h.Descends = map[string]bool{}
		}
		// A commit git does not know (history rewritten since) counts:
		// HEAD moved on.
		_, err := git(root, "merge-base", "--is-ancestor", r, "HEAD")
		h.Descends[r] = gitwt.ExitCode(err) != 1
	}
	return h
}

// headUnmoved returns HEAD, read from git's files alone (no git process),
// when it is still the commit every task waiting in committing entered it
// at and none enters it now.
func headUnmoved(root string, need *lifecycle.HeadNeed) (string, bool) {
	if need.Stamp {
		return "", false
	}
	sha, ok := gitwt.HeadFromFiles(root)
	return sha, ok && need.Unmoved(sha)
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
