package cli

import (
	"bytes"
	"cmp"
	"encoding/json"

	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/store"
)

// runningView is a review in progress (docs/hook.md): the plan's review lock
// is held and the log's last review event is its start.
type runningView struct {
	Review    string    `json:"review"`
	Task      string    `json:"task,omitempty"`
	Iteration int       `json:"iteration"`
	Model     string    `json:"model"`
	Reviewer  string    `json:"reviewer"`
	Started   time.Time `json:"started"`
	Elapsed   string    `json:"elapsed"`
}

// hookDecisionView is the hook's last decision on the plan when it was a
// failure or a refusal: `claude -p` never shows the allowed stop's message.
type hookDecisionView struct {
	Time     time.Time `json:"time"`
	Decision string    `json:"decision"`
	Why      string    `json:"why"`
	// ReviewLog is the kept output of a reviewer that failed.
	ReviewLog string `json:"review_log,omitempty"`
	// Hook is the hook that decided: "stop" or "session-start".
	Hook string `json:"hook"`
}

// what names the decision: "last stop", "last session start".
func (h *hookDecisionView) what() string {
	return "last " + strings.ReplaceAll(h.Hook, "-", " ")
}

// see is where to read more about a hook decision: the failed reviewer's
// kept output, else the plan's hook log.
func (h *hookDecisionView) see(planID string) string {
	if h.ReviewLog != "" {
		return "reviewer output in " + h.ReviewLog
	}
	return "see .taskie/logs/" + planID + ".log"
}

// runningReview returns the review running on the plan, nil when none.
func runningReview(p *store.Plan, now time.Time) *runningView {
	if !p.Store.Root().Probe(store.Rel(p.ID, store.ReviewLockName)) {
		return nil
	}
	var v *runningView
	for _, e := range p.Store.Tail(p.ID) {
		switch e.Event {
		case events.ReviewStarted:
			m, _ := events.MetaOf[events.ReviewStartedMeta](e)
			v = &runningView{Task: e.Task, Started: e.TS, Review: m.Review, Model: m.Model, Reviewer: m.Reviewer, Iteration: m.Iteration}
		case events.ReviewFinished, events.ReviewFailed:
			v = nil
		}
	}
	if v == nil {
		v = &runningView{Review: "(unknown)", Started: now}
	}
	v.Elapsed = now.Sub(v.Started).Round(time.Second).String()
	return v
}

// problemWords mark a hook decision worth showing: a failed review, a cap,
// a refusal, an error.
var problemWords = []string{"failed", "error", "plan choice", "max-reviews-reached", "block-cap", "config-untrusted",
	"iteration-out-of-range", "no-progress", "review-running", "mid-turn", "several-pending", "illegal", "state-unreadable",
	"no-current-task", "task-file-missing", "no-task-files", "state moved"}

// lastHookProblem reads the last line of the plan's hook log and returns
// it when it was a failure or a refusal.
func lastHookProblem(p *store.Plan) *hookDecisionView {
	tail, _, err := p.Store.Root().ReadTail(".taskie/logs/"+p.ID+".log", 8<<10)
	if err != nil || len(tail) == 0 {
		return nil
	}
	lines := bytes.Split(bytes.TrimRight(tail, "\n"), []byte{'\n'})
	var line struct {
		hookDecisionView
		Msg string `json:"msg"` // the hook, as the log writes it
	}
	if json.Unmarshal(lines[len(lines)-1], &line) != nil || line.Decision == "" {
		return nil
	}
	rec := line.hookDecisionView
	rec.Hook = cmp.Or(line.Msg, "stop")
	for _, w := range problemWords {
		if strings.Contains(rec.Why, w) {
			return &rec
		}
	}
	return nil
}
