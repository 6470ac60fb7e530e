package planchoice

// Mentions returns the known plan ids that text names, in order of their
// last occurrence: the last element is the most recent. A plan is named by
// `plans/<id>/`, `--plan <id>`, `--plan=<id>` or `plan new <id>` (boolean
// flags such as --auto may come between `new` and the id). An id is taken
// whole: "--plan auth-v2" names auth-v2, never auth.
//
// Every word of text counts (the hook counts only the agent's, with
// AgentMentions): the tests check the naming rules with it.
func Mentions(text []byte, known func(id string) bool) []string {
	last := map[string]int{}
	scan(text, 0, known, last, nil)
	return byPosition(last)
}
