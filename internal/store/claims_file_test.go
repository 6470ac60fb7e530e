package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	tclock "github.com/taskie-dev/taskie/internal/clock"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/fsafe"
	"github.com/taskie-dev/taskie/internal/parallel"
	"github.com/taskie-dev/taskie/internal/store"
)

var (
	key   = store.PlanKey{Plan: "p"}
	ctx   = context.Background()
	clock = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
)

// coordAt opens the coordination directory of a repository at root, on a
// clock the test moves with *now.
func coordAt(t *testing.T, root string, now *time.Time) *store.FileCoord {
	t.Helper()
	c, err := store.OpenFileCoord(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.Durable = false // tests need no fsync
	if now != nil {
		c.Clock = func() (time.Time, error) { return *now, nil }
	}
	return c
}

// gitRepo makes a git repository with one commit and returns its root.
func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	git(t, root, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, root, "add", "a.txt")
	git(t, root, "commit", "-q", "-m", "first")
	return root
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestFileCoordOutsideGit(t *testing.T) {
	root := t.TempDir()
	c := coordAt(t, root, &clock)
	if c.Shared() {
		t.Error("Shared() = true outside git")
	}
	if got, want := c.Dir(key), filepath.Join(root, ".taskie", "coord", "p"); got != want {
		t.Errorf("Dir = %s, want %s", got, want)
	}
	if _, err := c.Claim(ctx, key, 1, "a", time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, ".taskie", "coord", "p", "claims.json")); err != nil {
		t.Error(err)
	}
}

// Two worktrees of one clone see one set of claims: the git common
// directory holds them.
func TestFileCoordWorktreesShareClaims(t *testing.T) {
	root := gitRepo(t)
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, root, "worktree", "add", "-q", "-b", "w", wt)
	a, b := coordAt(t, root, &clock), coordAt(t, wt, &clock)
	if !a.Shared() || a.Dir(key) != b.Dir(key) {
		t.Fatalf("dirs %s (shared %v) and %s differ", a.Dir(key), a.Shared(), b.Dir(key))
	}
	if want := filepath.Join(root, ".git", "taskie", "p"); a.Dir(key) != want {
		t.Errorf("Dir = %s, want %s", a.Dir(key), want)
	}
	if d, err := a.Claim(ctx, key, 1, "main-agent", time.Minute); err != nil || d.Outcome != parallel.Granted {
		t.Fatalf("claim from main: %v, %v", d.Outcome, err)
	}
	d, err := b.Claim(ctx, key, 1, "wt-agent", time.Minute)
	var held *parallel.HeldError
	if err != nil || d.Outcome != parallel.Refused || !errors.As(d.Err, &held) || held.Holder.Agent != "main-agent" {
		t.Fatalf("claim from the worktree: %v, %v, %v", d.Outcome, d.Err, err)
	}
	if d, err := b.Claim(ctx, key, 2, "wt-agent", time.Minute); err != nil || d.Outcome != parallel.Granted {
		t.Fatalf("claim of task 2 from the worktree: %v, %v", d.Outcome, err)
	}
	cs, err := a.Claims(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if got := agents(cs); !slices.Equal(got, []string{"1:main-agent", "2:wt-agent"}) {
		t.Errorf("claims seen from main = %v", got)
	}
}

func agents(cs []parallel.Claim) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Task.String()+":"+c.Agent)
	}
	return out
}

// Twenty agents, each with its own descriptors as separate processes
// would have, claim one task: exactly one wins.
func TestClaimOneWinner(t *testing.T) {
	root := t.TempDir()
	var wg sync.WaitGroup
	outcomes := make([]parallel.Outcome, 20)
	for i := range outcomes {
		c := coordAt(t, root, nil)
		wg.Go(func() {
			d, err := c.Claim(ctx, key, 7, "agent-"+string(rune('a'+i)), time.Minute)
			if err != nil {
				t.Error(err)
			}
			outcomes[i] = d.Outcome
		})
	}
	wg.Wait()
	granted := 0
	for _, o := range outcomes {
		switch o {
		case parallel.Granted:
			granted++
		case parallel.Refused:
		default:
			t.Errorf("outcome %v", o)
		}
	}
	if granted != 1 {
		t.Errorf("%d winners, want 1", granted)
	}
}

// Twenty agents claim the next of 20 ready tasks: 20 distinct tasks.
func TestClaimNextDistinct(t *testing.T) {
	root := t.TempDir()
	ready := make([]domain.TaskID, 20)
	for i := range ready {
		ready[i] = domain.TaskID(i + 1)
	}
	var mu sync.Mutex
	got := map[domain.TaskID]string{}
	var wg sync.WaitGroup
	for i := range 20 {
		c := coordAt(t, root, nil)
		wg.Go(func() {
			agent := "agent-" + domain.TaskID(i).String()
			d, ok, err := c.ClaimNext(ctx, key, ready, agent, time.Minute)
			if err != nil || !ok || d.Outcome != parallel.Granted {
				t.Errorf("%s: %v %v %v", agent, d.Outcome, ok, err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if prev, dup := got[d.Claim.Task]; dup {
				t.Errorf("task %d given to %s and %s", d.Claim.Task, prev, agent)
			}
			got[d.Claim.Task] = agent
		})
	}
	wg.Wait()
	if len(got) != 20 {
		t.Errorf("%d tasks claimed, want 20", len(got))
	}
	c := coordAt(t, root, nil)
	if _, ok, err := c.ClaimNext(ctx, key, ready, "late", time.Minute); ok || err != nil {
		t.Errorf("a 21st agent got a task: %v, %v", ok, err)
	}
	cs, _ := c.Claims(ctx, key)
	if len(cs) != 20 {
		t.Errorf("claims.json holds %d claims, want 20", len(cs))
	}
}

func TestLeaseExpiryTakeover(t *testing.T) {
	now := clock
	c := coordAt(t, t.TempDir(), &now)
	if d, _ := c.Claim(ctx, key, 3, "a", 10*time.Minute); d.Outcome != parallel.Granted {
		t.Fatalf("first claim: %v", d.Outcome)
	}
	now = clock.Add(9 * time.Minute)
	if d, _ := c.Claim(ctx, key, 3, "b", 0); d.Outcome != parallel.Refused {
		t.Fatalf("claim of a live lease: %v", d.Outcome)
	}
	now = clock.Add(10 * time.Minute)
	d, err := c.Claim(ctx, key, 3, "b", 0)
	if err != nil || d.Outcome != parallel.Takeover || d.Previous == nil || d.Previous.Agent != "a" {
		t.Fatalf("claim of an expired lease: %+v, %v", d, err)
	}
	if want := now.Add(domain.DefaultLeaseTTL); !d.Claim.Expires.Equal(want) {
		t.Errorf("expires %v, want %v (default ttl)", d.Claim.Expires, want)
	}
	var kinds []string
	var takeover events.Event
	if err := c.ScanEvents(ctx, key, func(e events.Event) {
		kinds = append(kinds, e.Event)
		if e.Event == store.EventClaimTakeover {
			takeover = e
		}
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"CLAIM", "CLAIM_TAKEOVER"}, kinds); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if takeover.From != "a" || takeover.To != "b" || takeover.Task != "3" || !takeover.TS.Equal(now) {
		t.Errorf("takeover event %+v", takeover)
	}
}

func TestHeartbeatAndRelease(t *testing.T) {
	now := clock
	c := coordAt(t, t.TempDir(), &now)
	if d, _ := c.Heartbeat(ctx, key, 1, "a", time.Minute); d.Outcome != parallel.Refused || !errors.Is(d.Err, parallel.ErrNotClaimed) {
		t.Errorf("heartbeat without a claim: %v %v", d.Outcome, d.Err)
	}
	c.Claim(ctx, key, 1, "a", time.Minute)
	now = clock.Add(50 * time.Second)
	d, err := c.Heartbeat(ctx, key, 1, "a", time.Minute)
	if err != nil || d.Outcome != parallel.Renewed || !d.Claim.Expires.Equal(now.Add(time.Minute)) || !d.Claim.Acquired.Equal(clock) {
		t.Errorf("heartbeat: %+v, %v", d, err)
	}
	if d, _ := c.Heartbeat(ctx, key, 1, "b", time.Minute); d.Outcome != parallel.Refused {
		t.Errorf("heartbeat by another agent: %v", d.Outcome)
	}
	if d, _ := c.Release(ctx, key, 1, "b"); d.Outcome != parallel.Refused {
		t.Errorf("release by another agent: %v", d.Outcome)
	}
	if d, err := c.Release(ctx, key, 1, "a"); err != nil || d.Outcome != parallel.Released {
		t.Errorf("release: %v, %v", d.Outcome, err)
	}
	if cs, _ := c.Claims(ctx, key); len(cs) != 0 {
		t.Errorf("claims after release: %v", cs)
	}
	var kinds []string
	c.ScanEvents(ctx, key, func(e events.Event) { kinds = append(kinds, e.Event) })
	if diff := cmp.Diff([]string{"CLAIM", "RELEASE"}, kinds); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestClaimNextPrefersOrderAndSkipsHeld(t *testing.T) {
	now := clock
	c := coordAt(t, t.TempDir(), &now)
	c.Claim(ctx, key, 1, "x", time.Minute)
	c.Claim(ctx, key, 2, "y", time.Second)
	now = clock.Add(2 * time.Second) // y's lease on 2 has expired
	d, ok, err := c.ClaimNext(ctx, key, []domain.TaskID{1, 2, 3}, "z", time.Minute)
	if err != nil || !ok || d.Outcome != parallel.Takeover || d.Claim.Task != 2 {
		t.Fatalf("next: %+v %v %v", d, ok, err)
	}
	d, ok, _ = c.ClaimNext(ctx, key, []domain.TaskID{1, 2, 3}, "x", time.Minute)
	if !ok || d.Outcome != parallel.Renewed || d.Claim.Task != 1 {
		t.Errorf("next for the holder of 1: %+v", d)
	}
}

func TestMalformedClaimsNeverOverwritten(t *testing.T) {
	root := t.TempDir()
	c := coordAt(t, root, &clock)
	path := filepath.Join(c.Dir(key), store.ClaimsName)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, []byte("{not json"), 0o644)
	_, err := c.Claim(ctx, key, 1, "a", time.Minute)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "malformed claims file") {
		t.Errorf("err = %v", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "{not json" {
		t.Errorf("claims.json rewritten: %q", data)
	}
}

func TestTornCoordLog(t *testing.T) {
	root := t.TempDir()
	c := coordAt(t, root, &clock)
	c.Claim(ctx, key, 1, "a", time.Minute)
	log := filepath.Join(c.Dir(key), store.CoordLogName)
	f, _ := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"ts":"2026-`)
	f.Close()
	if err := c.AppendEvents(ctx, key, events.Event{Event: store.EventTaskResult, Task: "1"}); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	c.ScanEvents(ctx, key, func(e events.Event) { kinds = append(kinds, e.Event) })
	if diff := cmp.Diff([]string{"CLAIM", "TASK_RESULT"}, kinds); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestBadPlanKey(t *testing.T) {
	c := coordAt(t, t.TempDir(), &clock)
	if _, err := c.Claim(ctx, store.PlanKey{Plan: "../x"}, 1, "a", time.Minute); err == nil {
		t.Error("a plan id with .. was accepted")
	}
}

// TestClockNeedsTestSwitch: TASKIE_NOW alone never moves the lease clock,
// so that an agent cannot expire another's live lease, or hold its own
// until 2099, by setting it; with TASKIE_TEST_CLOCK=1 it does (tests).
func TestClockNeedsTestSwitch(t *testing.T) {
	root := t.TempDir()
	for _, sw := range []string{"", "0", "true", "1"} {
		t.Run("switch="+sw, func(t *testing.T) {
			env := map[string]string{tclock.Env: "2099-01-01T00:00:00Z", tclock.TestEnv: sw}
			clk, err := tclock.FromEnv(func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			c, _, err := store.OpenCoordination(ctx, root, store.CoordSettings{Clock: clk})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			got, err := c.Now(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if sw == "1" {
				if got.Year() != 2099 {
					t.Errorf("Now() = %v; want the test clock", got)
				}
			} else if time.Since(got).Abs() > time.Minute {
				t.Errorf("Now() = %v; want the real clock", got)
			}
		})
	}
}

func TestWorktreeRecord(t *testing.T) {
	c := coordAt(t, t.TempDir(), &clock)
	err := c.UpdateWorktrees(ctx, key, func(ws []store.Worktree, now time.Time) ([]store.Worktree, error) {
		return append(ws, store.Worktree{Task: 3, Path: "/r-p-task-3", BaseSHA: "b3", Created: now},
			store.Worktree{Path: "/r-p", BaseSHA: "b0", Created: now}), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := c.Worktrees(key)
	if err != nil || len(ws) != 2 || ws[0].Task != 0 || ws[1].Task != 3 {
		t.Fatalf("worktrees %+v, %v", ws, err)
	}
	if w, ok := store.FindWorktree(ws, 3); !ok || w.Since() != "b3" {
		t.Errorf("FindWorktree(3) = %+v, %v", w, ok)
	}
	if w, ok := store.WorktreeAt(ws, "/r-p-task-3/sub/dir"); !ok || w.Task != 3 {
		t.Errorf("WorktreeAt = %+v, %v", w, ok)
	}
	if _, ok := store.WorktreeAt(ws, "/r-p-task-30"); ok {
		t.Error("WorktreeAt matched a path that only shares a prefix")
	}
	w := store.Worktree{BaseSHA: "b", LastCommit: "l"}
	if w.Since() != "l" {
		t.Errorf("Since() = %q, want the last claim's commit", w.Since())
	}
}

// BenchmarkClaimNext20Agents times rounds of 20 agents, each with its own
// handle (as 20 processes have), claiming the next of 20 ready tasks at
// once; it reports the latency of one claim (p50, p99) and claims per
// second, without process start-up (bench/claims.sh times the binary).
func BenchmarkClaimNext20Agents(b *testing.B) {
	const agents = 20
	root := b.TempDir()
	handles := make([]*store.FileCoord, agents)
	for i := range handles {
		c, err := store.OpenFileCoord(root)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		c.Durable = os.Getenv("BENCH_DURABLE") != ""
		handles[i] = c
	}
	ready := make([]domain.TaskID, agents)
	for i := range ready {
		ready[i] = domain.TaskID(i + 1)
	}
	var lat []time.Duration
	var mu sync.Mutex
	round := 0
	start := time.Now()
	for b.Loop() {
		round++
		key := store.PlanKey{Plan: fmt.Sprintf("r%d", round)}
		var wg sync.WaitGroup
		for i, c := range handles {
			wg.Go(func() {
				t0 := time.Now()
				d, ok, err := c.ClaimNext(ctx, key, ready, fmt.Sprintf("agent-%d", i), time.Minute)
				el := time.Since(t0)
				if err != nil || !ok || d.Outcome != parallel.Granted {
					b.Errorf("agent %d: %v %v %v", i, d.Outcome, ok, err)
				}
				mu.Lock()
				lat = append(lat, el)
				mu.Unlock()
			})
		}
		wg.Wait()
	}
	elapsed := time.Since(start)
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms/claim-p50")
	b.ReportMetric(float64(lat[(len(lat)*99+99)/100-1].Microseconds())/1000, "ms/claim-p99")
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "claims/s")
}

// A claim waits for the coordination lock, gives up after LockTimeout
// with an error naming the lock file, and a lock granted after it gave
// up is handed back: the next claim goes through.
func TestLockWaitAndTimeout(t *testing.T) {
	root := t.TempDir()
	c := coordAt(t, root, &clock)
	c.Claim(ctx, key, 1, "a", time.Minute) // creates the directory and the lock file
	holder, err := fsafe.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	lockRel := ".taskie/coord/p/.lock"
	l, err := holder.Lock(lockRel, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.LockTimeout = 100 * time.Millisecond
	start := time.Now()
	_, err = c.Claim(ctx, key, 2, "b", time.Minute)
	if !errors.Is(err, fsafe.ErrLockTimeout) || !strings.Contains(err.Error(), filepath.Join("coord", "p", ".lock")) {
		t.Errorf("claim while locked: %v", err)
	}
	if el := time.Since(start); el < 100*time.Millisecond || el > 2*time.Second {
		t.Errorf("gave up after %v", el)
	}
	// a waiter that is still waiting gets the lock when the holder lets go
	c.LockTimeout = 5 * time.Second
	done := make(chan error, 1)
	go func() {
		_, err := c.Claim(ctx, key, 3, "c", time.Minute)
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	l.Unlock()
	if err := <-done; err != nil {
		t.Errorf("claim after the holder let go: %v", err)
	}
	if d, err := c.Claim(ctx, key, 2, "b", time.Minute); err != nil || d.Outcome != parallel.Granted {
		t.Errorf("claim of 2: %v %v", d.Outcome, err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := holder.Lock(lockRel, time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Claim(cancelled, key, 4, "d", time.Minute); !errors.Is(err, context.Canceled) {
		t.Errorf("claim with a cancelled context: %v", err)
	}
}
