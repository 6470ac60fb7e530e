package postgres

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/parallel"
	"github.com/taskie-dev/taskie/internal/store"
)

// The test binary run with claimerEnv=1 is one agent process: from the
// clone it is started in, it opens the coordination store the way every
// taskie command does (store.OpenCoordination: TASKIE_DATABASE_URL, the
// project named by the clone's origin remote) and claims the next ready
// task until none is left, printing one JSON line per claim.
const (
	claimerEnv   = "TASKIE_PGTEST_CLAIMER"
	claimerTasks = "TASKIE_PGTEST_TASKS"
	claimerAgent = "TASKIE_PGTEST_AGENT"
	claimerStart = "TASKIE_PGTEST_START" // a file: all agents start when it exists
)

type claimLine struct {
	Task    domain.TaskID `json:"task"`
	Agent   string        `json:"agent"`
	Project string        `json:"project"`
	Micros  int64         `json:"us"` // the claim's latency
}

func claimer() int {
	n, _ := strconv.Atoi(os.Getenv(claimerTasks))
	agent := os.Getenv(claimerAgent)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, proj, err := store.OpenCoordination(ctx, ".", store.CoordSettings{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.Close()
	ready := make([]domain.TaskID, n)
	for i := range ready {
		ready[i] = domain.TaskID(i + 1)
	}
	// Connected: say so, and start with the others.
	fmt.Println(`{"ready":true}`)
	for _, err := os.Stat(os.Getenv(claimerStart)); err != nil; _, err = os.Stat(os.Getenv(claimerStart)) {
		if ctx.Err() != nil {
			return 1
		}
		time.Sleep(time.Millisecond)
	}
	key := store.PlanKey{Project: proj, Plan: "fleet"}
	enc := json.NewEncoder(os.Stdout)
	for {
		t0 := time.Now()
		d, ok, err := c.ClaimNext(ctx, key, ready, agent, time.Hour)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if !ok {
			return 0
		}
		if d.Outcome != parallel.Granted {
			fmt.Fprintf(os.Stderr, "%s: task %d %v\n", agent, d.Claim.Task, d.Outcome)
			return 1
		}
		enc.Encode(claimLine{Task: d.Claim.Task, Agent: agent, Project: proj, Micros: time.Since(t0).Microseconds()})
		// The agent does the task; it is no longer ready.
		ready = slices.DeleteFunc(ready, func(t domain.TaskID) bool { return t == d.Claim.Task })
	}
}

// Two clones of one repository, ten agent processes in each, claim from
// one plan in one database: every task is claimed exactly once, and both
// clones name the same project.
func TestTwoClonesTwentyProcesses(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	url := migrated(t)
	origin := gitRepo(t)
	var clones []string
	for i := range 2 {
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("clone%d", i))
		git(t, "", "clone", "-q", origin, dir)
		clones = append(clones, dir)
	}
	const perClone, tasks = 10, 60
	start := filepath.Join(t.TempDir(), "start")
	var mu sync.Mutex
	var lines []claimLine
	var wg, ready sync.WaitGroup
	for ci, dir := range clones {
		for p := range perClone {
			agent := fmt.Sprintf("clone%d-agent%02d", ci, p)
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), claimerEnv+"=1", store.DatabaseURLEnv+"="+url,
				claimerTasks+"="+strconv.Itoa(tasks), claimerAgent+"="+agent, claimerStart+"="+start)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			ready.Add(1)
			wg.Go(func() {
				sc := bufio.NewScanner(out)
				if !sc.Scan() || sc.Text() != `{"ready":true}` {
					t.Errorf("%s did not start: %q", agent, sc.Text())
				}
				ready.Done()
				for sc.Scan() {
					var l claimLine
					if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
						t.Errorf("%s: %q: %v", agent, sc.Text(), err)
						continue
					}
					mu.Lock()
					lines = append(lines, l)
					mu.Unlock()
				}
				if err := cmd.Wait(); err != nil {
					t.Errorf("%s: %v: %s", agent, err, stderr.String())
				}
			})
		}
	}
	ready.Wait() // every agent is connected: go
	if err := os.WriteFile(start, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	byTask := map[domain.TaskID][]string{}
	projects := map[string]bool{}
	agents := map[string]bool{}
	var lat []int64
	for _, l := range lines {
		byTask[l.Task] = append(byTask[l.Task], l.Agent)
		projects[l.Project] = true
		agents[l.Agent] = true
		lat = append(lat, l.Micros)
	}
	for task := domain.TaskID(1); task <= tasks; task++ {
		if got := byTask[task]; len(got) != 1 {
			t.Errorf("task %d claimed by %v, want exactly one agent", task, got)
		}
	}
	if len(lines) != tasks {
		t.Errorf("%d claims for %d tasks", len(lines), tasks)
	}
	if len(projects) != 1 {
		t.Errorf("the clones named different projects: %v", projects)
	}
	for ci := range clones {
		if !slices.ContainsFunc(slices.Collect(maps.Keys(agents)), func(a string) bool { return strings.HasPrefix(a, fmt.Sprintf("clone%d-", ci)) }) {
			t.Errorf("no agent of clone %d got a task", ci)
		}
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		p99 := lat[(len(lat)*99+99)/100-1]
		t.Logf("%d claims by %d agents in 2 clones; project %v; latency p50 %dµs p99 %dµs", len(lat), len(agents), projects, lat[len(lat)/2], p99)
	}
	s := open(t, url)
	for p := range projects {
		cs, err := s.Claims(context.Background(), store.PlanKey{Project: p, Plan: "fleet"})
		if err != nil || len(cs) != tasks {
			t.Errorf("%d claims stored (%v), want %d", len(cs), err, tasks)
		}
	}
}

// gitRepo makes a repository with one commit, to clone.
func gitRepo(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "origin")
	git(t, "", "init", "-q", "-b", "main", root)
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
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}
