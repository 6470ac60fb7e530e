// Command claimsbench measures claims (docs/performance.md): agents claiming the next
// ready task of one plan all at once, each with its own handle on the
// store (its own file descriptors, or its own database connection, as
// separate processes have), on the file store and on PostgreSQL. It
// prints claims per second and the latency of one claim (p50, p99, max)
// beside the target, and fails when a task is claimed twice or never.
//
// On PostgreSQL it also runs two clones of one repository, half the agents
// in each, whose plan keys are resolved from their own checkouts.
//
// Without -url (or TASKIE_DATABASE_URL) it starts a throwaway PostgreSQL
// server with fsync on (package pgtest); where none can be started the
// PostgreSQL figure is skipped with the reason.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/parallel"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/store/postgres"
	"github.com/taskie-dev/taskie/internal/store/postgres/pgtest"
)

// target is docs/performance.md's bound on one claim.
const target = 50 * time.Millisecond

func main() {
	agents := flag.Int("agents", 20, "agents claiming at once")
	tasks := flag.Int("tasks", 40, "ready tasks of each round's plan")
	rounds := flag.Int("rounds", 50, "rounds of claims")
	url := flag.String("url", os.Getenv(store.DatabaseURLEnv), "PostgreSQL URL (default: a throwaway server)")
	only := flag.String("only", "", `"files" or "postgres": measure one store`)
	bin := flag.String("taskie", "", "measure claims through this taskie binary: agent loops draining a plan, beside the floor of process start")
	loops := flag.Int("loops", 20, "with -taskie: agent loops")
	reps := flag.Int("reps", 3, "with -taskie: runs per store (the median is reported)")
	cycle := flag.Bool("cycle", false, "with -taskie: each loop claims, heartbeats, reports a result and releases")
	flag.Parse()
	store.SetClaimRules(store.ClaimRules{Claim: parallel.DecideClaimAt, Heartbeat: parallel.DecideHeartbeatAt, Release: parallel.DecideReleaseAt, Fence: parallel.DecideFence})
	if *bin != "" {
		if err := binaryBench(*bin, *loops, *tasks, *reps, *url, *only, *cycle); err != nil {
			fmt.Fprintln(os.Stderr, "claimsbench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*agents, *tasks, *rounds, *url, *only); err != nil {
		fmt.Fprintln(os.Stderr, "claimsbench:", err)
		os.Exit(1)
	}
}

func run(agents, tasks, rounds int, url, only string) error {
	dir, err := os.MkdirTemp("", "taskie-claims-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	files := func() (store.Coordination, error) { return store.OpenFileCoord(dir) }
	label := fmt.Sprintf("claim --next, %d agents at once", agents)
	if only != "postgres" {
		if err := report(label+", file store", agents, tasks, rounds, files, nil); err != nil {
			return err
		}
	}
	if only == "files" {
		return nil
	}
	if url == "" {
		srv, err := pgtest.Start(pgtest.Options{Durable: true})
		if err != nil {
			fmt.Printf("%-52s skipped: %v\n", label+", PostgreSQL", err)
			return nil
		}
		defer srv.Stop()
		if url, err = srv.NewDB(context.Background()); err != nil {
			return err
		}
	}
	if err := migrate(url); err != nil {
		return err
	}
	pg := func() (store.Coordination, error) { return postgres.Open(context.Background(), url) }
	if err := report(label+", PostgreSQL", agents, tasks, rounds, pg, nil); err != nil {
		return err
	}
	if agents < 2 {
		return nil
	}
	// Two clones of one repository on one database: each resolves its
	// plan key from its own checkout (origin remotes written two ways),
	// half the agents in each; the keys must meet in one plan.
	projects, err := twoClones(dir, agents)
	if err != nil {
		return err
	}
	return report(fmt.Sprintf("claim --next, 2 clones × %d agents, PostgreSQL", agents/2), agents, tasks, rounds, pg, projects)
}

// twoClones makes two checkouts of one repository whose origin remotes
// name it two ways, and returns the project each agent's plan key carries:
// the first half resolved from one, the rest from the other.
func twoClones(dir string, agents int) ([]string, error) {
	remotes := []string{"https://bench@GitHub.com/team/app.git", "git@github.com:team/app"}
	var ids []string
	for i, remote := range remotes {
		clone := filepath.Join(dir, fmt.Sprintf("clone-%d", i))
		for _, args := range [][]string{{"init", "-q", clone}, {"-C", clone, "remote", "add", "origin", remote}} {
			if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
				return nil, fmt.Errorf("git %v: %v: %s", args, err, out)
			}
		}
		id, err := store.ProjectID(clone, "")
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	if ids[0] != ids[1] {
		return nil, fmt.Errorf("the two clones name different projects: %q, %q", ids[0], ids[1])
	}
	out := make([]string, agents)
	for i := range out {
		out[i] = ids[i*2/agents]
	}
	return out, nil
}

func migrate(url string) error {
	s, err := postgres.Connect(context.Background(), url)
	if err != nil {
		return err
	}
	defer s.Close()
	_, _, err = s.Migrate(context.Background())
	return err
}

// report runs the scenario on a store and prints its figures.
func report(name string, agents, tasks, rounds int, open func() (store.Coordination, error), projects []string) error {
	r, err := scenario(agents, tasks, rounds, open, projects)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	verdict := "ok"
	if r.max >= target {
		verdict = "OVER TARGET"
	}
	fmt.Printf("%-52s %7.0f claims/s  p50 %6.2f ms  p99 %6.2f ms  max %6.2f ms  (target: every claim < %v, none lost or doubled) %s\n",
		name, r.perSecond, ms(r.p50), ms(r.p99), ms(r.max), target, verdict)
	return nil
}

type figures struct {
	perSecond     float64
	p50, p99, max time.Duration
}

// scenario runs rounds of claims: in each round a fresh plan has tasks
// ready and every agent claims the next one at the same moment (what `taskie
// claim --next` does when a wave of tasks opens). One round first warms
// the handles up and is not counted. A task claimed twice, or an agent
// left without a task while tasks were left, is an error. projects, when
// given, is the project of each agent's plan key (else one for all).
func scenario(agents, tasks, rounds int, open func() (store.Coordination, error), projects []string) (figures, error) {
	handles := make([]store.Coordination, agents)
	for i := range handles {
		c, err := open()
		if err != nil {
			return figures{}, err
		}
		defer c.Close()
		handles[i] = c
	}
	ready := make([]domain.TaskID, tasks)
	for i := range ready {
		ready[i] = domain.TaskID(i + 1)
	}
	run := time.Now().UnixNano()
	var lat []time.Duration
	var busy time.Duration
	for round := range rounds + 1 {
		keys := make([]store.PlanKey, agents)
		for i := range keys {
			keys[i] = store.PlanKey{Project: "bench.example/claims", Plan: fmt.Sprintf("bench-%d-%d", run, round)}
			if projects != nil {
				keys[i].Project = projects[i]
			}
		}
		took, wall, err := burst(handles, keys, ready)
		if err != nil {
			return figures{}, fmt.Errorf("round %d: %w", round, err)
		}
		if round > 0 {
			lat, busy = append(lat, took...), busy+wall
		}
	}
	slices.Sort(lat)
	return figures{
		perSecond: float64(len(lat)) / busy.Seconds(),
		p50:       lat[len(lat)/2],
		p99:       lat[(len(lat)*99+99)/100-1],
		max:       lat[len(lat)-1],
	}, nil
}

// burst has every handle claim the next of ready at once, handle i in
// plan keys[i], and returns each claim's duration and the burst's.
func burst(handles []store.Coordination, keys []store.PlanKey, ready []domain.TaskID) ([]time.Duration, time.Duration, error) {
	took := make([]time.Duration, len(handles))
	won := make([]domain.TaskID, len(handles))
	errs := make([]error, len(handles))
	var start sync.WaitGroup
	start.Add(1)
	var wg sync.WaitGroup
	for i, c := range handles {
		wg.Go(func() {
			agent := fmt.Sprintf("agent-%02d", i)
			start.Wait()
			t0 := time.Now()
			d, ok, err := c.ClaimNext(context.Background(), keys[i], ready, agent, time.Hour)
			took[i] = time.Since(t0)
			switch {
			case err != nil:
				errs[i] = err
			case !ok || d.Outcome != parallel.Granted:
				errs[i] = fmt.Errorf("%s got no task (%v, %v)", agent, ok, d.Outcome)
			default:
				won[i] = d.Claim.Task
			}
		})
	}
	t0 := time.Now()
	start.Done()
	wg.Wait()
	wall := time.Since(t0)
	seen := map[domain.TaskID]bool{}
	for _, t := range won {
		if t != 0 && seen[t] {
			errs = append(errs, fmt.Errorf("task %d claimed twice", t))
		}
		seen[t] = true
	}
	return took, wall, errors.Join(errs...)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
