package planmerge

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/history"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
)

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// side builds one clone's log the way the store writes it: each commit's
// delta applied to that side's own state, with its prev and sha.
type side struct {
	st  *state.State
	log []byte
}

func (s *side) line(t *testing.T, e events.Event) {
	t.Helper()
	raw, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	s.log = append(s.log, append(raw, '\n')...)
}

func (s *side) commit(t *testing.T, min int, d state.Delta) {
	t.Helper()
	prev := ""
	if s.st != nil {
		prev = Hash(s.st.Encode())
	}
	n, err := state.Apply(s.st, d)
	if err != nil {
		t.Fatal(err)
	}
	s.line(t, events.Event{TS: t0.Add(time.Duration(min) * time.Minute), Plan: "p", Event: events.LifecycleCommit,
		Set: d.Set, Unset: d.Unset, Lifecycle: d.Lifecycle, Prev: prev, SHA: Hash(n.Encode())})
	s.st = n
}

func (s side) fork() *side { return &side{st: s.st.Clone(), log: append([]byte(nil), s.log...)} }

func moveTask(id, status string) state.Delta {
	return state.Delta{Lifecycle: map[string]json.RawMessage{id: json.RawMessage(`{"state":"` + status + `"}`)}}
}

func baseSide(t *testing.T) *side {
	s := &side{}
	full := state.Full(state.New())
	full.Set["lifecycle"] = json.RawMessage(`{"1":{"state":"pending"},"2":{"state":"pending"}}`)
	s.commit(t, 0, full)
	return s
}

func replayLog(log []byte) *state.State {
	var evs []events.Event
	for _, l := range split(log) {
		if l.ev != nil {
			evs = append(evs, *l.ev)
		}
	}
	return history.Replay(evs, history.Defaults{}).State
}

func lifecycleOf(t *testing.T, st []byte) string {
	t.Helper()
	s, err := state.Decode("state.json", st)
	if err != nil {
		t.Fatal(err)
	}
	return string(s.Lifecycle)
}

func TestHashIsTheStoreHash(t *testing.T) {
	for _, in := range [][]byte{nil, {}, []byte("{}\n")} {
		if Hash(in) != store.Hash(in) {
			t.Errorf("Hash(%q) = %q, store.Hash = %q", in, Hash(in), store.Hash(in))
		}
	}
}

func TestEvents(t *testing.T) {
	ev := func(min int, kind string) string {
		return `{"ts":"` + t0.Add(time.Duration(min)*time.Minute).Format(time.RFC3339) + `","plan":"p","event":"` + kind + `"}`
	}
	tw := func(min int, level string) string {
		return `{"ts":"` + t0.Add(time.Duration(min)*time.Minute).Format(time.RFC3339) + `","plan":"p","task":"3","event":"TIMEOUT_WARNING","from":"assigned","to":"assigned","meta":{"level":"` + level + `"}}`
	}
	mv := func(min int) string {
		return `{"ts":"` + t0.Add(time.Duration(min)*time.Minute).Format(time.RFC3339) + `","plan":"p","task":"3","event":"STATE_TRANSITION","from":"assigned","to":"planning"}`
	}
	lines := func(ls ...string) []byte {
		if len(ls) == 0 {
			return nil
		}
		return []byte(strings.Join(ls, "\n") + "\n")
	}
	for _, tc := range []struct {
		name               string
		base, ours, theirs []byte
		want               []byte
	}{
		{"both sides appended: time order",
			lines(ev(0, "A")), lines(ev(0, "A"), ev(1, "O1"), ev(3, "O3")), lines(ev(0, "A"), ev(2, "T2"), ev(4, "T4")),
			lines(ev(0, "A"), ev(1, "O1"), ev(2, "T2"), ev(3, "O3"), ev(4, "T4"))},
		{"the same event on both sides is kept once",
			lines(ev(0, "A")), lines(ev(0, "A"), ev(1, "X")), lines(ev(0, "A"), ev(1, "X"), ev(2, "T")),
			lines(ev(0, "A"), ev(1, "X"), ev(2, "T"))},
		{"same time: base, ours, theirs",
			lines(ev(0, "A")), lines(ev(0, "A"), ev(1, "O")), lines(ev(0, "A"), ev(1, "T")),
			lines(ev(0, "A"), ev(1, "O"), ev(1, "T"))},
		{"a side's own order is kept even when its clock went back",
			nil, lines(ev(5, "O5"), ev(1, "O1")), lines(ev(3, "T3")),
			lines(ev(3, "T3"), ev(5, "O5"), ev(1, "O1"))},
		{"a torn line is kept once, where its side wrote it",
			lines(ev(0, "A")), lines(ev(0, "A"), ev(2, "O"), `{"ts":"2026-03`), lines(ev(0, "A"), ev(1, "T"), ev(3, "T3")),
			lines(ev(0, "A"), ev(1, "T"), ev(2, "O"), `{"ts":"2026-03`, ev(3, "T3"))},
		{"a torn line on both sides is kept once",
			lines(ev(0, "A"), `{"ts`), lines(ev(0, "A"), `{"ts`, ev(1, "O")), lines(ev(0, "A"), `{"ts`),
			lines(ev(0, "A"), `{"ts`, ev(1, "O"))},
		{"a base line one side dropped is kept",
			lines(ev(0, "A"), ev(1, "B")), lines(ev(0, "A")), lines(ev(0, "A"), ev(1, "B"), ev(2, "T")),
			lines(ev(0, "A"), ev(1, "B"), ev(2, "T"))},
		{"a timeout warning both sides logged in the same state entry is kept once",
			nil, lines(tw(1, "warning"), tw(3, "alert")), lines(tw(2, "warning"), mv(4), tw(5, "warning")),
			lines(tw(1, "warning"), tw(3, "alert"), mv(4), tw(5, "warning"))},
		{"no trailing newline, blank lines",
			nil, []byte(ev(1, "O") + "\n\n"), []byte(ev(2, "T")),
			lines(ev(1, "O"), ev(2, "T"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(string(tc.want), string(Events(tc.base, tc.ours, tc.theirs))); d != "" {
				t.Errorf("merged log (-want +got):\n%s", d)
			}
		})
	}
}

func TestPlan(t *testing.T) {
	for _, tc := range []struct {
		name       string
		build      func(t *testing.T) (base, ours, theirs *side)
		lifecycle  string
		checkpoint bool
		notes      []string
	}{
		{"different tasks moved on each side: both moves kept",
			func(t *testing.T) (*side, *side, *side) {
				b := baseSide(t)
				o, th := b.fork(), b.fork()
				o.commit(t, 1, moveTask("1", "assigned"))
				th.commit(t, 2, moveTask("2", "assigned"))
				th.commit(t, 3, moveTask("2", "completed"))
				return b, o, th
			},
			`{"1":{"state":"assigned"},"2":{"state":"completed"}}`, true, nil},
		{"the same task moved on both sides: the later move kept, with a note",
			func(t *testing.T) (*side, *side, *side) {
				b := baseSide(t)
				o, th := b.fork(), b.fork()
				th.commit(t, 1, moveTask("1", "assigned"))
				o.commit(t, 2, moveTask("1", "abandoned"))
				return b, o, th
			},
			`{"1":{"state":"abandoned"},"2":{"state":"pending"}}`, true, []string{"task 1 changed on both sides: the later change is kept"}},
		{"only one side committed: no checkpoint",
			func(t *testing.T) (*side, *side, *side) {
				b := baseSide(t)
				o, th := b.fork(), b.fork()
				o.commit(t, 1, moveTask("1", "assigned"))
				th.line(t, events.Event{TS: t0.Add(2 * time.Minute), Plan: "p", Task: "2", Event: events.Progress})
				return b, o, th
			},
			`{"1":{"state":"assigned"},"2":{"state":"pending"}}`, false, nil},
		{"a field set on both sides: the later value kept, with a note",
			func(t *testing.T) (*side, *side, *side) {
				b := baseSide(t)
				o, th := b.fork(), b.fork()
				o.commit(t, 2, state.Delta{Set: map[string]json.RawMessage{"max_reviews": json.RawMessage("5")}})
				th.commit(t, 1, state.Delta{Set: map[string]json.RawMessage{"max_reviews": json.RawMessage("7")}})
				return b, o, th
			},
			`{"1":{"state":"pending"},"2":{"state":"pending"}}`, true, []string{"state.json max_reviews changed on both sides: the later change is kept"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, o, th := tc.build(t)
			got := Plan(b.log, o.log, th.log, history.Defaults{})
			if d := cmp.Diff(tc.lifecycle, lifecycleOf(t, got.State)); d != "" {
				t.Errorf("lifecycle (-want +got):\n%s", d)
			}
			if got.Checkpoint != tc.checkpoint {
				t.Errorf("checkpoint = %v, want %v", got.Checkpoint, tc.checkpoint)
			}
			if d := cmp.Diff(tc.notes, got.Notes); d != "" {
				t.Errorf("notes (-want +got):\n%s", d)
			}
			// What recover --check compares: the replay of the merged log
			// is the merged state.json.
			if d := cmp.Diff(string(got.State), string(replayLog(got.Log).Encode())); d != "" {
				t.Errorf("replay of the merged log differs from the merged state (-state +replay):\n%s", d)
			}
			// Both drivers compute the same; merging the result again
			// with either side changes nothing (a criss-cross merge).
			for _, other := range [][]byte{o.log, th.log} {
				again := Plan(b.log, got.Log, other, history.Defaults{})
				if d := cmp.Diff(string(got.Log), string(again.Log)); d != "" {
					t.Errorf("merging the merged log again changed it (-first +again):\n%s", d)
				}
			}
			if !Agrees(o.log, o.st.Encode(), history.Defaults{}) || !Agrees(got.Log, got.State, history.Defaults{}) {
				t.Errorf("a log and the state it wrote do not agree")
			}
		})
	}
}

func TestAgrees(t *testing.T) {
	b := baseSide(t)
	hand := b.st.Clone()
	hand.MaxReviews = 99
	for _, tc := range []struct {
		name      string
		log, file []byte
		want      bool
	}{
		{"the file the log wrote", b.log, b.st.Encode(), true},
		{"changed by hand", b.log, hand.Encode(), false},
		{"no log, no file", nil, nil, true},
		{"a log with a commit, no file", b.log, nil, false},
		{"a file that does not parse", b.log, []byte("<<<<<<< ours\n"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Agrees(tc.log, tc.file, history.Defaults{}); got != tc.want {
				t.Errorf("Agrees = %v, want %v", got, tc.want)
			}
		})
	}
}

// Events is the union of three versions of events.jsonl, in time order.
func Events(base, ours, theirs []byte) []byte {
	return join(union(split(base), split(ours), split(theirs)))
}
