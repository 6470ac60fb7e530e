package lifecycle

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
)

func TestStatusLevels(t *testing.T) {
	defaults := DefaultTimeouts()
	percents := []struct {
		num, den int64
		want     Level
	}{
		{0, 100, LevelOK},
		{79, 100, LevelOK},
		{80, 100, LevelWarning},
		{99, 100, LevelWarning},
		{100, 100, LevelAlert},
		{149, 100, LevelAlert},
		{150, 100, LevelEscalate},
		{1000, 100, LevelEscalate},
	}
	for _, s := range timed() {
		task := reach(t, s, Testing)
		limit := defaults[s]
		for _, p := range percents {
			elapsed := time.Duration(int64(limit) * p.num / p.den)
			got := Status(task, task.Since.Add(elapsed), defaults)
			want := TimeoutStatus{State: s, Level: p.want, Elapsed: elapsed, Limit: limit}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s at %d%%: (-want +got):\n%s", s, p.num, diff)
			}
		}
	}
}

func TestStatusIsExact(t *testing.T) {
	task := reach(t, InProgress, "")
	limits := Timeouts{InProgress: 4 * time.Hour}
	warnAt := 4 * time.Hour * 4 / 5
	cases := []struct {
		elapsed time.Duration
		want    Level
	}{
		{warnAt - 1, LevelOK},
		{warnAt, LevelWarning},
		{4*time.Hour - 1, LevelWarning},
		{4 * time.Hour, LevelAlert},
		{6*time.Hour - 1, LevelAlert},
		{6 * time.Hour, LevelEscalate},
		{-time.Hour, LevelOK}, // a clock before the state: no time elapsed
	}
	for _, tc := range cases {
		got := Status(task, task.Since.Add(tc.elapsed), limits)
		if got.Level != tc.want || got.Elapsed != max(tc.elapsed, 0) {
			t.Errorf("elapsed %s: %+v, want level %s", tc.elapsed, got, tc.want)
		}
		if got.Stuck() != (tc.want >= LevelAlert) {
			t.Errorf("elapsed %s: Stuck = %v", tc.elapsed, got.Stuck())
		}
	}
	huge := Timeouts{InProgress: time.Duration(1<<62 + 7)}
	if got := Status(task, task.Since.Add(time.Duration(1<<62)), huge); got.Level != LevelWarning {
		t.Errorf("huge durations: %+v, want warning (no overflow)", got)
	}
}

func TestStatusWithoutTimeout(t *testing.T) {
	for _, s := range []State{Completed, HumanEscalation, Abandoned} {
		task := reach(t, s, Testing)
		got := Status(task, task.Since.Add(1000*time.Hour), DefaultTimeouts())
		if got.Level != LevelOK || got.Limit != 0 || got.Elapsed != 1000*time.Hour {
			t.Errorf("%s: %+v", s, got)
		}
	}
}

func TestParseTimeouts(t *testing.T) {
	got, err := ParseTimeouts(map[string]string{"in_progress": "6h", "pending": "0", "cto_intervention": "90m"})
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultTimeouts()
	want[InProgress] = 6 * time.Hour
	want[CTOIntervention] = 90 * time.Minute
	delete(want, Pending)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseTimeouts (-want +got):\n%s", diff)
	}
	_, err = ParseTimeouts(map[string]string{"done": "1h", "completed": "1h", "testing": "soon", "approved": "-1m"})
	if err == nil {
		t.Fatal("bad overrides accepted")
	}
	lines := strings.Split(err.Error(), "\n")
	wantLines := []string{
		"lifecycle_timeouts.approved: -1m0s is negative",
		"lifecycle_timeouts.completed: completed is terminal and has no timeout",
		"lifecycle_timeouts.done: unknown state; states with a timeout are pending, assigned, planning, validated, in_progress, testing, quality_review, approved, committing, cto_intervention",
		`lifecycle_timeouts.testing: "soon" is not a duration (write it like 30m or 4h)`,
	}
	if diff := cmp.Diff(wantLines, lines); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func TestLevelString(t *testing.T) {
	for l, want := range map[Level]string{LevelOK: "ok", LevelWarning: "warning", LevelAlert: "alert", LevelEscalate: "escalate", 9: "Level(9)"} {
		if got := l.String(); got != want {
			t.Errorf("%d: %q, want %q", int(l), got, want)
		}
	}
}

// TestTimeoutWarnings: one TIMEOUT_WARNING per level crossed and not yet
// logged since the task entered its state; a move starts over; the log
// rebuilds the record.
func TestTimeoutWarnings(t *testing.T) {
	start := reach(t, InProgress, "") // in_progress has 4h
	at := func(d time.Duration) time.Time { return start.Since.Add(d) }
	levels := func(effs []Effect) []string {
		var out []string
		for _, e := range effs {
			out = append(out, e.Meta.Level)
		}
		return out
	}
	cases := []struct {
		name   string
		warned Level
		after  time.Duration
		want   []string
	}{
		{"79 %: nothing", LevelOK, 189*time.Minute + 36*time.Second, nil},
		{"80 %: warning", LevelOK, 192 * time.Minute, []string{"warning"}},
		{"100 % after the warning: alert", LevelWarning, 4 * time.Hour, []string{"alert"}},
		{"160 % found at once: every level", LevelOK, 384 * time.Minute, []string{"warning", "alert", "escalate"}},
		{"already escalated: nothing", LevelEscalate, 10 * time.Hour, nil},
		{"alert logged, still alert: nothing", LevelAlert, 5 * time.Hour, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			task := start
			task.Warned = tc.warned
			got, effs, err := TimeoutWarnings(task, at(tc.after), DefaultTimeouts())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, levels(effs)); diff != "" {
				t.Errorf("levels (-want +got):\n%s", diff)
			}
			for _, e := range effs {
				if e.Kind != KindTimeout || e.From != InProgress || e.To != InProgress || e.Actor != ActorSystem || e.Meta.State != InProgress || e.Meta.Limit != "4h0m0s" {
					t.Errorf("effect %+v", e)
				}
			}
			if len(tc.want) > 0 && got.Warned.String() != tc.want[len(tc.want)-1] {
				t.Errorf("Warned = %s", got.Warned)
			}
		})
	}

	// The log: warnings, a move (which starts over), a warning again.
	task, log := reachLog(t, InProgress, "")
	step := func(r result) {
		t.Helper()
		task = r.ok(t)
		log = append(log, r.effs...)
	}
	step(res(TimeoutWarnings(task, task.Since.Add(5*time.Hour), DefaultTimeouts())))
	step(res(Move(task, Testing, ActorAgent, "", task.Since.Add(5*time.Hour))))
	if task.Warned != LevelOK {
		t.Errorf("a move keeps Warned = %s", task.Warned)
	}
	step(res(TimeoutWarnings(task, task.Since.Add(25*time.Minute), DefaultTimeouts()))) // testing has 30m
	if task.Warned != LevelWarning || !strings.Contains(string(Encode(map[domain.TaskID]Task{1: task})), `"warned":"warning"`) {
		t.Errorf("after a warning in testing: %s", Encode(map[domain.TaskID]Task{1: task}))
	}
	if vs := CheckLog(log); len(vs) > 0 {
		t.Fatalf("the log breaks: %v", vs)
	}
	replayed, err := Replay(log)
	if err != nil || string(Encode(replayed)) != string(Encode(map[domain.TaskID]Task{1: task})) {
		t.Errorf("replay: %v\n%s\nwant\n%s", err, Encode(replayed), Encode(map[domain.TaskID]Task{1: task}))
	}
	// A second warning at a logged level breaks the log.
	dup := append(slices.Clone(log), log[len(log)-1])
	if vs := CheckLog(dup); len(vs) != 1 {
		t.Errorf("a repeated warning: violations %v", vs)
	}
}
