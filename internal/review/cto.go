package review

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/taskie-dev/taskie/internal/domain"
)

// CTOReview is the kind of a CTO review (docs/lifecycle.md, "The CTO"): a
// task whose reviews failed three times in a row is judged as a whole by
// the strongest model of the rotation, which decides how it goes on. It is
// not a plan phase: state.json never holds it.
const CTOReview domain.Phase = "cto-review"

// CTODecision is a CTO review's structured answer.
type CTODecision struct {
	// Decision is guided_retry, rollback, skip or escalate.
	Decision string `json:"decision"`
	// Guidance is what the agent must do differently (guided retry,
	// rollback) or why (skip, escalate).
	Guidance string `json:"guidance"`
	// RollbackTo is the lifecycle state a rollback returns to; "" else.
	RollbackTo string `json:"rollback_to"`
	// Review is the CTO's assessment, in Markdown.
	Review string `json:"review"`
}

// CTODecisions are the decisions a CTO may take, in the schema's order.
var CTODecisions = []string{"guided_retry", "rollback", "skip", "escalate"}

// ctoSchema is the CTO's answer schema in strict mode: every property
// required, no other property.
const ctoSchema = `{
  "type": "object",
  "properties": {
    "decision": {"type": "string", "enum": ["guided_retry", "rollback", "skip", "escalate"],
      "description": "guided_retry: the agent tries again with your guidance; rollback: back to an earlier lifecycle state (rollback_to); skip: accept the work as it is; escalate: a human must decide."},
    "guidance": {"type": "string", "description": "For guided_retry and rollback: concrete instructions for the agent, in Markdown. For skip and escalate: why, and for escalate what the human must decide."},
    "rollback_to": {"type": "string", "enum": ["", "planning", "validated", "in_progress", "testing"],
      "description": "For rollback: the state to return to; \"\" otherwise."},
    "review": {"type": "string", "description": "Your assessment of the task and its review cycle, in Markdown."}
  },
  "required": ["decision", "guidance", "rollback_to", "review"],
  "additionalProperties": false
}`

var compactCTOSchema = sync.OnceValue(func() string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(ctoSchema)); err != nil {
		panic("review: invalid CTO schema: " + err.Error())
	}
	return b.String()
})

// CTOSchema returns the CTO's answer schema, compact.
func CTOSchema() string { return compactCTOSchema() }

// SchemaFor returns the answer schema of a kind of review.
func SchemaFor(kind domain.Phase) string {
	if kind == CTOReview {
		return CTOSchema()
	}
	return Schema()
}

// ctoOf reads a CTO's decision: a known decision, guidance for the
// decisions that send the agent back to work, a state for a rollback.
func ctoOf(obj map[string]json.RawMessage) (CTODecision, error) {
	var d CTODecision
	b, _ := json.Marshal(obj)
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("CTO decision does not read: %v", err)
	}
	d.Decision = strings.ToLower(strings.TrimSpace(d.Decision))
	d.RollbackTo = strings.TrimSpace(d.RollbackTo)
	switch {
	case !slices.Contains(CTODecisions, d.Decision):
		return d, fmt.Errorf("invalid CTO decision %q (want one of %s)", d.Decision, strings.Join(CTODecisions, ", "))
	case d.Decision == "guided_retry" && strings.TrimSpace(d.Guidance) == "":
		return d, fmt.Errorf("a guided_retry without guidance")
	case d.Decision == "rollback" && d.RollbackTo == "":
		return d, fmt.Errorf("a rollback without rollback_to")
	}
	if d.Decision != "rollback" {
		d.RollbackTo = ""
	}
	return d, nil
}

// finishAnswer checks that the answer is of the kind asked for and, for a
// review, that its file is written (finish). A CTO review writes no file:
// taskie writes its guidance.
func finishAnswer(req Request, res Result, raw []byte) (Result, error) {
	switch {
	case req.Kind == CTOReview && res.CTO == nil:
		return res, failf(FailOutput, raw, "CTO reviewer: the answer holds a verdict, not a decision")
	case req.Kind == CTOReview:
		return res, nil
	case res.CTO != nil:
		return res, failf(FailOutput, raw, "reviewer: the answer holds a CTO decision, not a verdict")
	}
	return finish(req, res)
}
