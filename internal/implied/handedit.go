package implied

import (
	"strings"

	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/history"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// handEdit is what a hand edit of state.json in s means for the review
// counters (workflow.HandEditReset): nil unless the file differs from
// what the log's last commit wrote and moved current_task or phase with
// the counters left. Only then is the log read, so a plan whose file is
// taskie's own costs nothing.
func handEdit(p *store.Plan, s *store.Snapshot) *workflow.HandEdit {
	if s == nil || s.State == nil {
		return nil
	}
	sha := s.LoggedSHA()
	if sha == "" || sha == "-" || sha == s.Version.State {
		return nil
	}
	cfg, err := Config(p)
	if err != nil {
		return nil
	}
	r := history.NewReplayer(history.Defaults{MaxReviews: &cfg.MaxReviews, Models: cfg.Models})
	if err := p.Store.Scan(p.ID, r.Apply, func(string) {}); err != nil {
		return nil
	}
	logged := r.Result().State
	if store.Hash(logged.Encode()) != sha {
		// The replay is not what the last commit wrote (a log from before
		// every change was logged): no ground to compare the file with.
		return nil
	}
	return workflow.HandEditReset(logged, s.State, cfg.Models)
}

// withHandEdit is s as the commands see it: with the counters a hand edit
// left started (the file is rewritten at the next commit).
func withHandEdit(s *store.Snapshot, he *workflow.HandEdit) *store.Snapshot {
	if he == nil {
		return s
	}
	v := *s
	v.State = he.State
	return &v
}

// handEditChange writes with change c, made on the snapshot as
// withHandEdit shows it, the counters the hand edit started, and says so
// in the log, first: the edit came before the change. found is the file
// as found; a counter the change puts back as found needs no word.
func handEditChange(he *workflow.HandEdit, found *state.State, c store.Change) store.Change {
	if he == nil || c.Replace {
		return c
	}
	if c.State == nil {
		c.State = he.State
	}
	var kept []string
	for _, f := range he.Reset {
		if !sameField(f, found, c.State) {
			kept = append(kept, f)
		}
	}
	if len(kept) == 0 {
		return c
	}
	value := he.State.Task().String()
	if he.Field == "phase" {
		value = string(he.State.Phase)
	}
	ev := events.Event{Event: events.FieldSet, Actor: "taskie", Task: he.State.Task().String(),
		Reason: "state.json edited by hand: " + he.Field + " moved with the review counters of the cycle before; " +
			strings.Join(kept, ", ") + " started as `taskie start` and `taskie set` start them",
		Meta: events.Meta(events.FieldSetMeta{Field: he.Field, Value: value, By: "hand", Started: kept})}
	c.Events = append([]events.Event{ev}, c.Events...)
	return c
}

// sameField reports whether a and b agree on one of the counters.
func sameField(f string, a, b *state.State) bool {
	switch f {
	case "phase_iteration":
		return a.Iteration() == b.Iteration() && (a.PhaseIteration == nil) == (b.PhaseIteration == nil)
	case "consecutive_clean":
		return a.ConsecutiveClean == b.ConsecutiveClean
	case "review_model":
		return a.ReviewModel == b.ReviewModel
	case "needs_human":
		return a.NeedsHuman == b.NeedsHuman
	}
	return false
}
