package hook

// SubagentStop is the SubagentStop hook. The commit check of SPEC §13 (a
// subagent claiming done without a new commit) arrives with parallel
// execution; until then it allows every subagent stop, reading its input so
// the agent never waits on the pipe.
func SubagentStop(e Env) int {
	_, _ = ReadInput(e.Stdin, e.InputDeadline)
	return 0
}
