package fleettest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// costs is what the clean phases measured: the process-start floor, one
// claim with the machine to itself, and the clean race.
type costs struct {
	versionAlone []run // `taskie --version`, one after another
	floor        []run // `taskie --version` through every agent loop at once
	floorWall    time.Duration

	alone     []run // claims by one agent, one after another
	aloneWire wireCount
	aloneUse  usage

	mu       sync.Mutex
	race     []run // every claim --next of the race
	raceWon  []run // those granted
	raceWire wireCount
	raceUse  usage
	cut      bool // the race's time bound ended it
}

// loops runs fn as every machine's agent loops at once, each in its
// machine's namespace, with the extra goroutines beside them, and waits.
func (f *fleet) loops(fn func(mi, ai int), extra ...func(*sync.WaitGroup)) time.Duration {
	var wg sync.WaitGroup
	start := time.Now()
	for mi := range f.ms {
		m := f.ms[mi]
		for ai := range perMach {
			wg.Go(func() {
				if err := enter(m.ns); err != nil {
					f.t.Errorf("%s: %v", m.name, err)
					return
				}
				fn(mi, ai)
			})
		}
	}
	for _, e := range extra {
		e(&wg)
	}
	wg.Wait()
	return time.Since(start)
}

// claimRace is one claim of the clean race by a new agent name; it
// records the grant and says whether a task was left to claim.
func (f *fleet) claimRace(ctx context.Context, m machine, agent string, into *[]run, won *[]run, mu *sync.Mutex) bool {
	r := f.exec(ctx, nil, m.clone, f.taskie(m), taskieBin, "claim", "--plan", racePlan, "--next", "--as", agent, "--ttl", raceTTL.String())
	mu.Lock()
	*into = append(*into, r)
	if r.code == 0 {
		*won = append(*won, r)
	}
	mu.Unlock()
	switch {
	case r.code == 0:
		f.mu.Lock()
		task := strings.TrimSpace(r.stdout)
		f.raced[task] = append(f.raced[task], agent)
		f.mu.Unlock()
	case strings.Contains(r.stderr, "no task is ready"):
		return false
	case ctx.Err() == nil:
		f.fail("claim --next: " + firstLine(r.stderr))
	}
	return true
}

// measureAlone times `taskie --version` and a claim by one agent of
// machine 1 with the fleet idle, counting the claim's traffic and CPU.
func (f *fleet) measureAlone(w *wire, c *costs) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		m := f.ms[0]
		if err := enter(m.ns); err != nil {
			f.t.Errorf("%s: %v", m.name, err)
			return
		}
		ctx := context.Background()
		for range aloneRuns {
			c.versionAlone = append(c.versionAlone, f.exec(ctx, nil, m.clone, f.taskie(m), taskieBin, "--version"))
		}
		var mu sync.Mutex
		var warm []run
		f.claimRace(ctx, m, "alone-0", &warm, &warm, &mu) // the database's first connection fills its caches
		w.take()
		before := snap(f.postmaster)
		var won []run
		for i := range aloneRuns {
			f.claimRace(ctx, m, fmt.Sprintf("alone-%d", i+1), &c.alone, &won, &mu)
		}
		c.aloneUse = between(before, snap(f.postmaster))
		c.aloneWire = w.take()
		if len(won) != len(c.alone) {
			f.t.Errorf("one agent alone: %d of %d claims granted", len(won), len(c.alone))
		}
	}()
	<-done
}

// measureFloor runs `taskie --version` through every agent loop at once:
// how fast this machine starts the binary, the floor of any loop of
// taskie processes.
func (f *fleet) measureFloor(c *costs) {
	var mu sync.Mutex
	c.floorWall = f.loops(func(mi, _ int) {
		m := f.ms[mi]
		for range floorRuns {
			r := f.exec(context.Background(), nil, m.clone, f.taskie(m), taskieBin, "--version")
			mu.Lock()
			c.floor = append(c.floor, r)
			mu.Unlock()
		}
	})
}

// race is the clean phase: every agent loop claims the race plan's tasks,
// one `claim --next` under a new name after another, until none is left
// (or raceBound, but in the benchmark), with no kills nor restart.
func (f *fleet) race(ctx context.Context, w *wire, c *costs, bench bool) {
	if !bench {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, raceBound)
		defer cancel()
	}
	w.take()
	before := snap(f.postmaster)
	f.loops(func(mi, ai int) {
		for n := 0; ctx.Err() == nil; n++ {
			if !f.claimRace(ctx, f.ms[mi], fmt.Sprintf("m%d-a%02d-%d", mi+1, ai, n), &c.race, &c.raceWon, &c.mu) {
				return
			}
		}
	})
	c.raceUse = between(before, snap(f.postmaster))
	c.raceWire = w.take()
	c.cut = errors.Is(ctx.Err(), context.DeadlineExceeded)
}

// checkRace asserts every task of the race was claimed at most once, and
// exactly once unless the time bound cut the race.
func (f *fleet) checkRace(c *costs) {
	f.mu.Lock()
	defer f.mu.Unlock()
	doubles, missing := 0, 0
	for i := 1; i <= f.raceTasks; i++ {
		switch got := f.raced[strconv.Itoa(i)]; {
		case len(got) == 0:
			missing++
		case len(got) > 1:
			doubles++
			if doubles <= 10 {
				f.t.Errorf("task %d claimed %d times at once: %v", i, len(got), got)
			}
		}
	}
	granted := 0
	for _, as := range f.raced {
		granted += len(as)
	}
	cut := ""
	switch {
	case missing > 0 && c.cut:
		cut = fmt.Sprintf(" (the race was cut at its bound, %v)", raceBound)
	case missing > 0:
		f.t.Errorf("%d of %d tasks never claimed", missing, f.raceTasks)
	}
	f.say("fleet race: %d tasks, %d claims granted, %d double claims, %d never claimed%s", f.raceTasks, granted, doubles, missing, cut)
}

// say prints a figure, marked so that `make test` shows it though the
// test passes.
func (f *fleet) say(format string, args ...any) {
	fmt.Println("figure: " + fmt.Sprintf(format, args...))
}

func (f *fleet) where() string {
	if f.ms[0].ns == "" {
		return "3 clones on loopback"
	}
	return "3 network namespaces"
}

func lat(rs []run) []time.Duration {
	ds := make([]time.Duration, len(rs))
	for i, r := range rs {
		ds[i] = r.end.Sub(r.start)
	}
	return ds
}

func cpuSum(rs []run) time.Duration {
	var d time.Duration
	for _, r := range rs {
		d += r.cpu
	}
	return d
}

func per(d time.Duration, n int) time.Duration {
	if n == 0 {
		return 0
	}
	return d / time.Duration(n)
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// reportClean prints the clean race's figures, what one claim costs, and
// the bounds they set on this machine beside the targets.
func (f *fleet) reportClean(c *costs) {
	agents := len(f.ms) * perMach
	cores := runtime.NumCPU()
	won, all := lat(c.raceWon), lat(c.race)
	rate := ratio(len(c.raceWon), 1) / c.raceUse.wall.Seconds()
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "missed"
	}
	f.say("fleet (b) clean race, no kills nor restart: %s, %d agent loops, %d tasks, 50 ms RTT: %d claims in %v = %.1f claims/s; claim --next end to end (process start included) p50 %v p99 %v (granted), p50 %v p99 %v (all %d calls); load average %s; targets p99 ≤ 150 ms: %s, ≥ 500 claims/s: %s",
		f.where(), agents, f.raceTasks, len(c.raceWon), c.raceUse.wall.Round(time.Millisecond), rate,
		pct(won, 50), pct(won, 99), pct(all, 50), pct(all, 99), len(all), loadAvg(),
		verdict(len(won) > 0 && pct(won, 99) <= 150*time.Millisecond), verdict(rate >= 500))

	// One claim with the machine to itself.
	n := len(c.alone)
	aw := c.aloneWire
	aCPU, aPG, aSelf := per(cpuSum(c.alone), n), per(c.aloneUse.pg, n), per(c.aloneUse.self, n)
	pgText := func(d time.Duration) string {
		if d < 0 {
			return "(not known)"
		}
		return ms(d)
	}
	link := time.Duration(ratio(aw.startup+aw.queries, n) * float64(2*oneWay))
	f.say("fleet (c) one claim alone (%d, one after another): p50 %v p99 %v end to end; %.1f connections, %.1f round trips to connect, %.1f of statements each (%v of the 50 ms RTT link); CPU a claim: taskie %s, its PostgreSQL backend %s, the harness (proxy, loop) %s",
		n, pct(lat(c.alone), 50), pct(lat(c.alone), 99), ratio(aw.conns, n), ratio(aw.startup, n), ratio(aw.queries, n), link.Round(time.Millisecond),
		ms(aCPU), pgText(aPG), ms(aSelf))

	// The race's cost, and who had the cores.
	rn := len(c.race)
	rw, ru := c.raceWire, c.raceUse
	tk := cpuSum(c.race)
	rPG := ru.pg
	if rPG < 0 {
		rPG = 0
	}
	ours := tk + rPG + ru.self
	f.say("fleet (c) in the race, a claim: %.1f connections, %.1f round trips to connect, %.1f of statements; CPU taskie %s, PostgreSQL %s, harness %s; the machine (%d cores) %.0f%% busy: taskie %.0f%%, PostgreSQL %.0f%%, the harness %.0f%%, other work %.0f%%",
		ratio(rw.conns, rn), ratio(rw.startup, rn), ratio(rw.queries, rn), ms(per(tk, rn)), pgText(per(ru.pg, rn)), ms(per(ru.self, rn)),
		cores, ru.share(ru.busy), ru.share(tk), ru.share(rPG), ru.share(ru.self), max(0, ru.share(ru.busy)-ru.share(ours)))

	// The process-start floor.
	fl := len(c.floor)
	floorRate := ratio(fl, 1) / c.floorWall.Seconds()
	f.say("fleet (c) process start: `taskie --version` alone p50 %v (CPU %s); through the %d loops at once %d processes in %v = %.0f/s, p50 %v p99 %v (CPU %s each)",
		pct(lat(c.versionAlone), 50), ms(per(cpuSum(c.versionAlone), len(c.versionAlone))), agents, fl, c.floorWall.Round(time.Millisecond), floorRate,
		pct(lat(c.floor), 50), pct(lat(c.floor), 99), ms(per(cpuSum(c.floor), fl)))

	// The bounds. A claim's floor is its link and its CPU: what it takes
	// with idle cores, however many agents there are.
	alone50 := pct(lat(c.alone), 50)
	claimCPU := aCPU + max(aPG, 0) + aSelf
	floor := link + aCPU + max(aPG, 0)
	little := float64(agents) / alone50.Seconds()
	cpuBound := float64(cores) / claimCPU.Seconds()
	bound := min(little, cpuBound, floorRate)
	reach := fmt.Sprintf("out of reach here (at most %.0f claims/s)", bound)
	if bound >= 500 {
		reach = "within reach here"
	}
	p99 := fmt.Sprintf("out of reach: a claim's floor (link %v + CPU %s) is %v", link, ms(aCPU+max(aPG, 0)), floor.Round(time.Millisecond))
	if floor <= 150*time.Millisecond {
		p99 = fmt.Sprintf("within reach of a claim with idle cores (its floor: link %v + CPU %s = %v), not while claims queue for the cores", link, ms(aCPU+max(aPG, 0)), floor.Round(time.Millisecond))
	}
	f.say("fleet bounds: Little's law, %d agents / %v a claim alone = %.0f claims/s with cores to spare (500/s needs %.0f agents); %d cores / %s of CPU a claim = %.0f claims/s (500/s needs %.1f cores); process start through %d loops %.0f/s. ≥ 500 claims/s is %s; p99 ≤ 150 ms (alone here: p50 %v, p99 %v) is %s",
		agents, alone50, little, math.Ceil(500*alone50.Seconds()), cores, ms(claimCPU), cpuBound, 500*claimCPU.Seconds(),
		agents, floorRate, reach, alone50, pct(lat(c.alone), 99), p99)
}

// reportChaos prints the chaos drain's figures: what its checks found, and
// its pace (kills, restart and lease waits included).
func (f *fleet) reportChaos() {
	f.mu.Lock()
	defer f.mu.Unlock()
	wall := f.end.Sub(f.start)
	s := f.sum
	f.say("fleet (a) chaos drain: %s, %d agents, %d tasks, 50 ms RTT, %d holders SIGKILLed, PostgreSQL restarted once (-m immediate): %d of %d tasks done in %v; %d tasks claimed twice at once, %d results lost, %d writes accepted from a non-holder or a stale token, %d of %d late results with a stale token refused; %d of %d killed holders' tasks taken over within the lease plus a heartbeat (slowest %v, bound %v); pace with the kills, restart and lease waits: %.1f claims/s, claim --next p50 %v p99 %v (all %d calls); the machine %.0f%% busy, load average %s",
		f.where(), len(f.agents), f.tasks, s.killed, len(f.done), f.tasks, wall.Round(time.Millisecond),
		s.logDoubles+s.timeDoubles, s.lost, s.strangers+s.stale+s.timeStale+len(f.lateTaken), f.lateTried-len(f.lateTaken), f.lateTried,
		s.reclaimed, s.killed, s.worstTake.Round(time.Millisecond), s.worstBound.Round(time.Millisecond),
		ratio(len(f.claimWon), 1)/wall.Seconds(), pct(f.claimAll, 50), pct(f.claimAll, 99), len(f.claimAll),
		f.chaosUse.share(f.chaosUse.busy), loadAvg())
	if len(f.failures) > 0 {
		var kinds []string
		for k, n := range f.failures {
			kinds = append(kinds, fmt.Sprintf("%d× %s", n, k))
		}
		slices.Sort(kinds)
		f.t.Logf("commands that failed and were retried or left to the lease (the restart, lost leases):\n  %s", strings.Join(kinds, "\n  "))
	}
}
