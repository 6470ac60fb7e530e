package plan

// Rule is one validation rule as users read it: `taskie validate` names
// violations by number ("(rule 7)"), and `taskie help validation` lists
// the rules (docs/validation.md, checked against this list).
type Rule struct {
	N    int
	Text string
	// Warning: the rule's violations are warnings, on which the Stop hook
	// never blocks (taskie validate and taskie doctor still fail on them).
	Warning bool
}

// Rules are the rules of a plan directory: the nine of its files, and the
// task lifecycle (10).
var Rules = []Rule{
	{1, "`plan.md` exists.", false},
	{2, "Every `.md` file is a regular file named as taskie names them: `plan.md`, `design.md`, `tasks.md`, `task-T.md`, `task-T-output.md` (a finished task's output), `task-T-cto-N.md` (the guidance of CTO attempt N), or a review or post-review file such as `plan-review-N.md`, `task-T-review-N.md`, `task-T-post-review-N.md` (the older `task-T-code-review-N.md` names are accepted).", false},
	{3, "No `.md` file is in a subdirectory of the plan.", false},
	{4, "A review file has the file it reviews: `plan-review-*` → `plan.md`, `design-review-*` → `design.md`, `tasks-review-*` and `all-code-review-*` → `tasks.md`, `task-T-review-*` → `task-T.md`.", false},
	{5, "A post-review file has its review file, and every review of a series except the latest has its post-review file.", false},
	{6, "When `task-T.md` files exist, `tasks.md` exists.", false},
	{7, "`tasks.md` is a markdown table, optionally after a heading and prose: a header with `Id` and `Status` columns, a separator and at least one task row, with nothing between or after its rows; ids are unique positive integers; statuses are known (pending, in-progress, done, cancelled, postponed, blocked); every id in the `Depends on` column is a task of the table, and no tasks depend on each other in a cycle (`dependency cycle: 1 → 3 → 2 → 1`, read \"depends on\": none of them could ever start, in order or in parallel).", false},
	{8, "`state.json`, when present, is a regular file of at most 1 MiB, parses and its values are legal: a known phase and next phase, counters ≥ 0, `phase_iteration` within 0…`max_reviews` (the Stop hook runs no review from a state outside it), a review model.", true},
	{9, "The plan directory holds only `.md` files, `state.json`, `events.jsonl` and taskie's own lock and temporary files (hidden files included).", false},
	{10, "The task lifecycle keeps its invariants: every record of `state.json`'s `lifecycle` has one known state, reached without skipping a state (except by the CTO's override), never left a terminal state, counts at most 3 failures per state and 2 CTO attempts; every lifecycle event of `events.jsonl` replays without breaking them; and the records equal that replay (checked by `taskie validate`, not at every stop).", true},
}
