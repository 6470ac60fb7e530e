// Package planmerge merges a plan's files the way git's merge driver
// `taskie merge-driver` asks (docs/architecture.md, "Merging plan files"):
// events.jsonl as the union of both sides' events in time order, and
// state.json as the replay of that merged log. Nothing here does I/O.
package planmerge

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/history"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/state"
)

// Actor is who the checkpoint of a merge names.
const Actor = "taskie merge-driver"

// Reason is the checkpoint's reason.
const Reason = "merged by git: both sides' changes replayed in time order"

// line is one line of a log, with the time it sorts by.
type line struct {
	raw []byte
	ts  time.Time
	ev  *events.Event // nil: the line does not parse (a torn write)
}

// split reads a log's lines; a line that does not parse sorts at the time
// of the line before it, so it stays where its side wrote it.
func split(data []byte) []line {
	var out []line
	var last time.Time
	for _, raw := range bytes.Split(data, []byte{'\n'}) {
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			continue
		}
		l := line{raw: raw, ts: last}
		var e events.Event
		if json.Unmarshal(raw, &e) == nil {
			l.ev, l.ts = &e, e.TS
			last = e.TS
		}
		out = append(out, l)
	}
	return out
}

// union merges the sides' lines: every line once (identical lines are the
// same event), each side's own order kept, and across sides the earlier
// event first; at the same time base, then ours, then theirs.
//
// A TIMEOUT_WARNING is one per level per state entry (the lifecycle's
// rule): two clones that both saw a task overdue logged the same warning
// at different times, and only the first is kept.
func union(sides ...[]line) []line {
	seen := map[string]bool{}
	entry := map[string]int{} // task → state entries so far
	warned := map[string]bool{}
	pos := make([]int, len(sides))
	var out []line
	for {
		best := -1
		for i, s := range sides {
			for pos[i] < len(s) && seen[string(s[pos[i]].raw)] {
				pos[i]++
			}
			if pos[i] == len(s) {
				continue
			}
			if best < 0 || s[pos[i]].ts.Before(sides[best][pos[best]].ts) {
				best = i
			}
		}
		if best < 0 {
			return out
		}
		l := sides[best][pos[best]]
		seen[string(l.raw)] = true
		pos[best]++
		if e := l.ev; e != nil && e.Task != "" {
			if k, err := lifecycle.ParseKind(e.Event); err == nil {
				if k == lifecycle.KindTimeout {
					m, _ := events.MetaOf[events.LifecycleMeta](*e)
					key := fmt.Sprintf("%s\x00%d\x00%s\x00%s", e.Task, entry[e.Task], e.From, m.Level)
					if warned[key] {
						continue
					}
					warned[key] = true
				} else if k.Moves() && e.From != e.To {
					entry[e.Task]++
				}
			}
		}
		out = append(out, l)
	}
}

func join(ls []line) []byte {
	var b bytes.Buffer
	for _, l := range ls {
		b.Write(l.raw)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// Result is a merged plan.
type Result struct {
	Log   []byte   // the merged events.jsonl
	State []byte   // the state.json the merged log implies
	Notes []string // what the merge decided that a reader should know
	// Checkpoint is set when the merge appended a STATE_CHECKPOINT of
	// the merged state (both sides committed changes to state.json).
	Checkpoint bool
}

// Hash is the store's fingerprint of a file (store.Hash), which a commit
// event's sha holds.
func Hash(data []byte) string {
	if data == nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// Plan merges a plan's three logs. The commits of each side were made on
// that side's own state; replayed together in time order their changes
// apply field by field and task record by task record, the later change
// winning where both sides changed the same one (a note says which). When
// the replay differs from what the log's last commit says state.json is —
// both sides committed — or when both sides changed the same thing, a
// STATE_CHECKPOINT of the merged state is appended (with the notes), stamped with the last event's time so that two clones merging
// the same sides write the same line; from there on the log and the file
// agree, and `taskie recover --check` says so.
func Plan(base, ours, theirs []byte, d history.Defaults) Result {
	b, o, t := split(base), split(ours), split(theirs)
	merged := union(b, o, t)
	r := history.NewReplayer(d)
	var last *events.Event
	var lastTS time.Time
	plan := ""
	for _, l := range merged {
		if l.ev == nil {
			continue
		}
		r.Apply(*l.ev)
		if l.ev.IsCommit() {
			last = l.ev
		}
		if l.ev.TS.After(lastTS) {
			lastTS = l.ev.TS
		}
		if l.ev.Plan != "" {
			plan = l.ev.Plan
		}
	}
	res := r.Result()
	st := res.State.Encode()
	out := Result{Log: join(merged), State: st, Notes: bothSides(b, o, t)}
	if last == nil || (last.SHA == Hash(st) && len(out.Notes) == 0) {
		return out
	}
	cp := events.Event{TS: lastTS, Plan: plan, Event: events.Checkpoint, Actor: Actor, Reason: Reason,
		Set: state.Full(res.State).Set, SHA: Hash(st)}
	if len(out.Notes) > 0 {
		cp.Meta = events.Meta(events.CheckpointMeta{Notes: out.Notes})
	}
	raw, err := json.Marshal(cp)
	if err != nil {
		return out // unreachable: every field marshals
	}
	out.Log = append(out.Log, append(raw, '\n')...)
	out.Checkpoint = true
	return out
}

// bothSides names what both sides changed since the base: the same task's
// lifecycle record or the same state.json field. The later change is the
// one kept; the earlier stays in the history.
func bothSides(base, ours, theirs []line) []string {
	inBase := map[string]bool{}
	for _, l := range base {
		inBase[string(l.raw)] = true
	}
	changed := func(side, other []line) (map[string]bool, map[string]bool) {
		inOther := map[string]bool{}
		for _, l := range other {
			inOther[string(l.raw)] = true
		}
		tasks, fields := map[string]bool{}, map[string]bool{}
		for _, l := range side {
			if l.ev == nil || !l.ev.IsCommit() || inBase[string(l.raw)] || inOther[string(l.raw)] {
				continue
			}
			for id := range l.ev.Lifecycle {
				tasks[id] = true
			}
			for k := range l.ev.Set {
				if k == "lifecycle" {
					continue // a whole field: the records decide
				}
				fields[k] = true
			}
			for _, k := range l.ev.Unset {
				fields[k] = true
			}
		}
		return tasks, fields
	}
	ot, of := changed(ours, theirs)
	tt, tf := changed(theirs, ours)
	var notes []string
	for _, id := range common(ot, tt) {
		notes = append(notes, fmt.Sprintf("task %s changed on both sides: the later change is kept", id))
	}
	if f := common(of, tf); len(f) > 0 {
		notes = append(notes, fmt.Sprintf("state.json %s changed on both sides: the later change is kept", strings.Join(f, ", ")))
	}
	return notes
}

func common(a, b map[string]bool) []string {
	var out []string
	for k := range a {
		if b[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Agrees reports whether a side's state.json is what its own log
// replays to — the state a merge can rebuild. A file changed by hand
// since its log's last commit cannot be rebuilt from the logs; an absent
// one agrees with a log that holds no commit.
func Agrees(log, stateJSON []byte, d history.Defaults) bool {
	var evs []events.Event
	hasCommit := false
	for _, l := range split(log) {
		if l.ev != nil {
			evs = append(evs, *l.ev)
			hasCommit = hasCommit || l.ev.IsCommit()
		}
	}
	if len(bytes.TrimSpace(stateJSON)) == 0 {
		return !hasCommit
	}
	cur, err := state.Decode("state.json", stateJSON)
	if err != nil {
		return false
	}
	return len(history.Diff(history.Replay(evs, d).State, cur)) == 0
}
