package history

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/taskie-dev/taskie/internal/benchfix"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/lifecycle"
)

// TestLifecycleFoldAndQuery folds lean lifecycle events (other kinds are
// ignored) and selects tasks.
func TestLifecycleFoldAndQuery(t *testing.T) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	tasks := map[domain.TaskID]lifecycle.Task{}
	var log []lifecycle.Effect
	for _, c := range []lifecycle.Cue{{Task: 1, Event: lifecycle.TaskStarted}, {Task: 2, Event: lifecycle.TaskStarted},
		{Task: 2, Event: lifecycle.ReviewFailed}, {Task: 2, Event: lifecycle.ReviewFailed}, {Task: 3, Event: lifecycle.ReviewPassed}} {
		effs, errs := lifecycle.Feed(tasks, []lifecycle.Cue{c}, lifecycle.ActorHook, now)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		log = append(log, effs...)
	}
	f := NewLifecycle()
	var l events.Lean
	for i, e := range log {
		ev := events.Event{TS: e.At, Plan: "p", Task: e.Task.String(), Event: string(e.Kind), From: string(e.From), To: string(e.To), Actor: string(e.Actor), Reason: e.Reason}
		if m := e.Meta.Map(); len(m) > 0 {
			ev.Meta = m
		}
		line, _ := json.Marshal(ev)
		if err := events.ParseLean(line, &l); err != nil {
			t.Fatal(err)
		}
		l.Line = i + 1
		f.Add(&l)
		if i == 3 {
			other, _ := json.Marshal(events.Event{Event: events.PhaseChange, Task: "1", From: "x", To: "y"})
			_ = events.ParseLean(other, &l)
			f.Add(&l)
		}
	}
	if vs, more := f.Violations(); len(vs)+more > 0 {
		t.Fatalf("violations: %v", vs)
	}
	if string(lifecycle.Encode(f.Tasks())) != string(lifecycle.Encode(tasks)) {
		t.Fatalf("fold differs from the records")
	}
	ids := func(q Query, at time.Time) string {
		var out []string
		for _, tk := range q.Select(f.Tasks(), at, lifecycle.DefaultTimeouts()) {
			out = append(out, tk.ID.String())
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		q    Query
		at   time.Time
		want string
	}{
		{Query{}, now, "1,2,3"},
		{Query{State: lifecycle.InProgress}, now, "1,2"},
		{Query{Failing: true}, now, "2"},
		{Query{Escalated: true}, now, ""},
		{Query{Stuck: true}, now.Add(15 * time.Minute), "3"},
		{Query{Stuck: true}, now.Add(4 * time.Hour), "1,2,3"},
		{Query{Stuck: true, Failing: true}, now.Add(4 * time.Hour), "2"},
		{Query{Task: 2, State: lifecycle.Committing}, now, ""},
	} {
		if got := ids(tc.q, tc.at); got != tc.want {
			t.Errorf("%+v at %s = %q, want %q", tc.q, tc.at, got, tc.want)
		}
	}
	bad := NewLifecycle()
	_ = events.ParseLean([]byte(`{"ts":"yesterday","task":"1","event":"FAILURE"}`), &l)
	l.Line = 7
	bad.Add(&l)
	if vs, _ := bad.Violations(); len(vs) != 1 || vs[0].Pos != 7 || !strings.Contains(vs[0].Msg, "unreadable FAILURE event") {
		t.Errorf("violations of an unreadable event: %v", vs)
	}
}

// TestApplyLeanParity: replaying a log leanly gives the replay of every
// event decoded whole.
func TestApplyLeanParity(t *testing.T) {
	dir := t.TempDir()
	plan, _, err := benchfix.EventsPlan(dir, 3000)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(plan, events.FileName)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// an old-style prefix (no commit events yet) and a torn last line
	data = append([]byte(`{"ts":"2026-01-01T00:00:00Z","plan":"log","event":"FIELD_SET","meta":{"field":"max_reviews","value":"9"}}`+"\n"), data...)
	data = append(data, `{"ts":"2027-01-01T00:00:00Z","plan":"log","event":"PHA`...)
	whole := NewReplayer(Defaults{})
	if err := events.ScanReader(bytes.NewReader(data), path, whole.Apply, func(string) {}); err != nil {
		t.Fatal(err)
	}
	lean := NewReplayer(Defaults{})
	err = events.ScanLean(bytes.NewReader(data), path, events.Filter{}, func(l *events.Lean) error {
		lean.ApplyLean(l, func(w string) { t.Errorf("warning: %s", w) })
		return nil
	}, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	a, b := whole.Result(), lean.Result()
	if string(a.State.Encode()) != string(b.State.Encode()) {
		t.Errorf("state:\n%s\n%s", a.State.Encode(), b.State.Encode())
	}
	a.State, b.State = nil, nil
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("result (-whole +lean):\n%s", diff)
	}
	if a.Used["PHASE_CHANGE"] == 0 || a.Skipped["STATE_TRANSITION"] == 0 {
		t.Errorf("the log replayed nothing: %+v", a)
	}
}
