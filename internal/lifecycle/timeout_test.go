package lifecycle

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
