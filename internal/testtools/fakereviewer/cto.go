package main

import "strings"

// CTO steps answer a CTO review's schema (a decision, not a verdict):
//
//	CTO-RETRY use the streaming API     guided_retry with that guidance
//	CTO-ROLLBACK in_progress redo it    rollback to a state, with guidance
//	CTO-SKIP good enough                skip, with why
//	CTO-ESCALATE needs a product call   escalate, with what a human decides
//
// The text after the keyword (after the state for a rollback) is the
// guidance; a default one is used when none is given.

// ctoDecision is the CTO review's structured answer.
type ctoDecision struct {
	Decision   string `json:"decision"`
	Guidance   string `json:"guidance"`
	RollbackTo string `json:"rollback_to"`
	Review     string `json:"review"`
}

// isCTOStep reports a CTO step; its text is not a findings list.
func isCTOStep(step string) bool { return strings.HasPrefix(step, "CTO-") }

// ctoAnswer is the answer of a CTO step.
func ctoAnswer(inv invocation, text string) ctoDecision {
	d := ctoDecision{Review: "# Fake CTO review\n\nThe reviews of this task went round; fake assessment.\n"}
	switch inv.step {
	case "CTO-RETRY":
		d.Decision = "guided_retry"
	case "CTO-ROLLBACK":
		d.Decision = "rollback"
		d.RollbackTo, text, _ = strings.Cut(text, " ")
	case "CTO-SKIP":
		d.Decision = "skip"
	case "CTO-ESCALATE":
		d.Decision = "escalate"
	default:
		d.Decision = strings.ToLower(strings.TrimPrefix(inv.step, "CTO-"))
	}
	d.Guidance = strings.TrimSpace(text)
	if d.Guidance == "" {
		d.Guidance = "Fake CTO guidance: handle the error the reviews keep reporting."
	}
	return d
}
