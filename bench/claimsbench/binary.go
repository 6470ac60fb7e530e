package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/taskie-dev/taskie/internal/store/postgres/pgtest"
)

// Claims through the binary (docs/performance.md): loops agent loops, each
// running one `taskie claim --next` process after another under a new
// agent name (a new agent, so that none is given its own claim back),
// drain a plan of tasks ready tasks in a git repository. The floor is the
// same loops running `taskie --version` as many times: process start on
// this machine. Each store's run is measured right after a floor run, in
// turn, reps times; the figures are the median run's.
//
// With -cycle every loop runs an agent's whole cycle instead: claim
// --next, heartbeat, task result complete, release — each command's CPU
// and latency reported apart.

// procRun is one process: its wall time, CPU time and minor page faults.
type procRun struct {
	wall, cpu time.Duration
	faults    int64
	code      int
	stdout    string
	stderr    string
}

func runProc(dir string, env []string, bin string, args ...string) procRun {
	c := exec.Command(bin, args...)
	c.Dir = dir
	c.Env = env
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	t0 := time.Now()
	err := c.Run()
	r := procRun{wall: time.Since(t0), stdout: out.String(), stderr: errb.String()}
	if c.ProcessState == nil {
		r.code, r.stderr = -1, err.Error()
		return r
	}
	r.code = c.ProcessState.ExitCode()
	r.cpu = c.ProcessState.UserTime() + c.ProcessState.SystemTime()
	r.faults = pageFaults(c.ProcessState)
	return r
}

// loopFigures are one run of the loops.
type loopFigures struct {
	n        int
	wall     time.Duration
	perSec   float64
	lat, cpu []time.Duration // sorted
	faults   []int64         // sorted
	steps    map[string]*stepFigures
	// serverCPU is the database server's CPU time per claim (its
	// processes that ended during the run), 0 when not known.
	serverCPU time.Duration
}

// childrenCPU is the CPU time of the ended children of process pid
// (Linux: /proc/<pid>/stat cutime and cstime), 0 when not known.
func childrenCPU(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // after the command name
	if len(f) < 15 {
		return 0
	}
	var ticks int64
	for _, v := range f[13:15] { // fields 16 and 17: cutime, cstime
		n, _ := strconv.ParseInt(v, 10, 64)
		ticks += n
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ
}

type stepFigures struct {
	lat, cpu []time.Duration
	faults   []int64
}

func (s *stepFigures) add(r procRun) {
	s.lat, s.cpu, s.faults = append(s.lat, r.wall), append(s.cpu, r.cpu), append(s.faults, r.faults)
}

func (s *stepFigures) sort() {
	slices.Sort(s.lat)
	slices.Sort(s.cpu)
	slices.Sort(s.faults)
}

func pctl[T any](xs []T, p int) T {
	var zero T
	if len(xs) == 0 {
		return zero
	}
	return xs[max(0, (len(xs)*p+99)/100-1)]
}

// binaryBench is the -taskie mode.
func binaryBench(bin string, loops, tasks, reps int, url, only string, cycle bool) error {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "taskie-claimsbin-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	env := append(os.Environ(), "TASKIE_AGENT=", "TASKIE_CLAIM_TOKEN=", "TASKIE_DATABASE_URL=", "NO_COLOR=1")
	stores := []string{}
	serverPID := 0 // the throwaway server's postmaster: its CPU per claim is reported
	if only != "postgres" {
		stores = append(stores, "files")
	}
	if only != "files" {
		if url == "" {
			srv, err := pgtest.Start(pgtest.Options{Durable: true})
			if err != nil {
				fmt.Printf("PostgreSQL skipped: %v\n", err)
			} else {
				defer srv.Stop()
				serverPID = srv.PID()
				if url, err = srv.NewDB(context.Background()); err != nil {
					return err
				}
			}
		}
		if url != "" {
			if err := migrate(url); err != nil {
				return err
			}
			stores = append(stores, "postgres")
		}
	}
	results := map[string][]loopFigures{}
	for rep := range reps {
		for _, st := range stores {
			floor, err := drain(dir, env, bin, loops, tasks, nil)
			if err != nil {
				return err
			}
			results["floor/"+st] = append(results["floor/"+st], floor)
			repo := filepath.Join(dir, fmt.Sprintf("%s-%d", st, rep))
			senv := env
			if st == "postgres" { // each repository is its own project (its origin)
				senv = append(slices.Clip(env), "TASKIE_DATABASE_URL="+url)
			}
			work, err := makeRepo(repo, tasks)
			if err != nil {
				return err
			}
			srvCPU := childrenCPU(serverPID)
			f, err := drain(repo, senv, bin, loops, tasks, &agentCycle{cycle: cycle, work: work})
			if err != nil {
				return fmt.Errorf("%s: %w", st, err)
			}
			if st == "postgres" && serverPID > 0 {
				f.serverCPU = (childrenCPU(serverPID) - srvCPU) / time.Duration(f.n)
			}
			results[st] = append(results[st], f)
		}
	}
	mode := "claim --next"
	if cycle {
		mode = "claim, heartbeat, result, release"
	}
	fmt.Printf("== claims through the binary: %d agent loops (%s) draining %d tasks, %d runs per store, median run\n", loops, mode, tasks, reps)
	for _, st := range stores {
		f, fl := median(results[st]), median(results["floor/"+st])
		name := map[string]string{"files": "file store", "postgres": "PostgreSQL"}[st]
		target := map[string]float64{"files": 85, "postgres": 70}[st]
		pct := 100 * f.perSec / fl.perSec
		verdict := "ok"
		if pct < target {
			verdict = "UNDER TARGET"
		}
		fmt.Printf("%-12s %6.0f claims/s  p50 %6.1f ms  p99 %6.1f ms  CPU/claim p50 %5.2f ms  faults p50 %4d | floor %6.0f/s p50 %5.1f ms CPU %5.2f ms faults %4d | %3.0f %% of the floor (target >= %.0f %%) %s\n",
			name, f.perSec, ms(pctl(f.lat, 50)), ms(pctl(f.lat, 99)), ms(pctl(f.cpu, 50)), pctl(f.faults, 50),
			fl.perSec, ms(pctl(fl.lat, 50)), ms(pctl(fl.cpu, 50)), pctl(fl.faults, 50), pct, target, verdict)
		if f.serverCPU > 0 {
			fmt.Printf("    PostgreSQL server CPU per claim (its processes, the connection's included): %.2f ms\n", ms(f.serverCPU))
		}
		for _, step := range []string{"claim", "heartbeat", "result", "release"} {
			s := f.steps[step]
			if s == nil || !cycle {
				continue
			}
			fmt.Printf("    %-10s p50 %6.1f ms  p99 %6.1f ms  CPU p50 %5.2f ms  p99 %5.2f ms  faults p50 %4d\n",
				step, ms(pctl(s.lat, 50)), ms(pctl(s.lat, 99)), ms(pctl(s.cpu, 50)), ms(pctl(s.cpu, 99)), pctl(s.faults, 50))
		}
	}
	return nil
}

func median(fs []loopFigures) loopFigures {
	s := slices.Clone(fs)
	slices.SortFunc(s, func(a, b loopFigures) int { return int(a.perSec - b.perSec) })
	return s[len(s)/2]
}

// agentCycle is what each loop of a store runs.
type agentCycle struct {
	cycle bool
	work  string // the commit results name
}

// drain runs loops until tasks processes (the floor: a nil cycle) or
// until no task is ready; every task must be claimed exactly once.
func drain(dir string, env []string, bin string, loops, tasks int, ac *agentCycle) (loopFigures, error) {
	var (
		mu      sync.Mutex
		next    atomic.Int64
		claimed = map[string]string{}
		steps   = map[string]*stepFigures{}
		errs    []string
	)
	step := func(name string, r procRun) {
		mu.Lock()
		defer mu.Unlock()
		if steps[name] == nil {
			steps[name] = &stepFigures{}
		}
		steps[name].add(r)
	}
	fail := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(errs) < 5 {
			errs = append(errs, fmt.Sprintf(format, a...))
		}
	}
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range loops {
		wg.Go(func() {
			for {
				n := next.Add(1)
				if ac == nil {
					if n > int64(tasks) {
						return
					}
					r := runProc(dir, env, bin, "--version")
					if r.code != 0 {
						fail("--version: exit %d: %s", r.code, r.stderr)
					}
					step("claim", r)
					continue
				}
				agent := fmt.Sprintf("a%02d-%d", i, n)
				r := runProc(dir, env, bin, "claim", "--next", "--as", agent)
				if r.code != 0 {
					if strings.Contains(r.stderr, "no task is ready") {
						return
					}
					fail("claim --next --as %s: exit %d: %s", agent, r.code, r.stderr)
					return
				}
				step("claim", r)
				task := strings.TrimSpace(r.stdout)
				mu.Lock()
				if prev, dup := claimed[task]; dup {
					errs = append(errs, fmt.Sprintf("task %s claimed by %s and %s", task, prev, agent))
				}
				claimed[task] = agent
				mu.Unlock()
				if !ac.cycle {
					continue
				}
				for _, c := range []struct {
					name string
					args []string
				}{
					{"heartbeat", []string{"heartbeat", task, "--as", agent}},
					{"result", []string{"task", "result", task, "--status", "complete", "--commit", ac.work, "--as", agent}},
					{"release", []string{"release", task, "--as", agent}},
				} {
					r := runProc(dir, env, bin, c.args...)
					if r.code != 0 {
						fail("%s: exit %d: %s", strings.Join(c.args, " "), r.code, r.stderr)
					}
					step(c.name, r)
				}
			}
		})
	}
	wg.Wait()
	wall := time.Since(t0)
	if len(errs) > 0 {
		return loopFigures{}, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	c := steps["claim"]
	if c == nil {
		return loopFigures{}, fmt.Errorf("no process ran")
	}
	if ac != nil && len(claimed) != tasks {
		return loopFigures{}, fmt.Errorf("%d of %d tasks claimed", len(claimed), tasks)
	}
	for _, s := range steps {
		s.sort()
	}
	return loopFigures{n: len(c.lat), wall: wall, perSec: float64(len(c.lat)) / wall.Seconds(),
		lat: c.lat, cpu: c.cpu, faults: c.faults, steps: steps}, nil
}

// planNewState is the state.json `taskie plan new` writes: a claim on a
// plan with one moves the task's lifecycle in a commit of the plan.
const planNewState = `{
  "max_reviews": 8,
  "current_task": null,
  "phase": "new-plan",
  "phase_iteration": null,
  "next_phase": null,
  "review_model": "opus",
  "consecutive_clean": 0,
  "tdd": false
}
`

// makeRepo makes a git repository with an origin remote and one plan of
// tasks pending tasks (with state.json, as a plan under way has), and
// returns the commit the agents' results name (a commit after HEAD).
func makeRepo(repo string, tasks int) (string, error) {
	pd := filepath.Join(repo, ".taskie", "plans", "p")
	if err := os.MkdirAll(pd, 0o755); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("| Id | Status | Title |\n|----|--------|-------|\n")
	for i := 1; i <= tasks; i++ {
		fmt.Fprintf(&b, "| %d | pending | task %d |\n", i, i)
	}
	for name, body := range map[string]string{
		"plan.md":    "# Bench\n",
		"tasks.md":   b.String(),
		"state.json": planNewState,
	} {
		if name == "state.json" && os.Getenv("CLAIMSBENCH_NO_STATE") != "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(pd, name), []byte(body), 0o644); err != nil {
			return "", err
		}
	}
	git := func(args ...string) (string, error) {
		c := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=bench", "-c", "user.email=bench@example.com"}, args...)...)
		out, err := c.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("git %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out)), nil
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"remote", "add", "origin", "https://bench.example/team/" + filepath.Base(repo) + ".git"},
		{"add", "-A"},
		{"commit", "-q", "-m", "plan"},
		{"commit", "-q", "--allow-empty", "-m", "the agents' work"},
	} {
		if _, err := git(args...); err != nil {
			return "", err
		}
	}
	work, err := git("rev-parse", "HEAD")
	if err != nil {
		return "", err
	}
	_, err = git("reset", "-q", "--hard", "HEAD~1")
	return work, err
}
