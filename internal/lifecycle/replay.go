package lifecycle

import "github.com/taskie-dev/taskie/internal/domain"

// Fold applies one effect to the records it belongs to, through the same
// check and update the moves use, and returns the records. It updates tasks
// in place (a nil map is made): the records and their maps must belong to
// the fold, not be shared with Tasks the caller keeps. An effect that does
// not apply returns a Violation (as the error) and leaves tasks unchanged.
func Fold(tasks map[domain.TaskID]Task, e Effect) (map[domain.TaskID]Task, error) {
	if tasks == nil {
		tasks = map[domain.TaskID]Task{}
	}
	t, ok := tasks[e.Task]
	if rule, msg := check(&t, ok, e); rule != "" {
		return tasks, Violation{Pos: -1, Task: e.Task, Rule: rule, Msg: msg}
	}
	evolve(&t, e)
	tasks[e.Task] = t
	return tasks, nil
}

// Replay folds a log, in order, into fresh records. It stops at the first
// effect that does not apply, with that effect's position in the Violation.
func Replay(effects []Effect) (map[domain.TaskID]Task, error) {
	tasks := map[domain.TaskID]Task{}
	for i, e := range effects {
		if _, err := Fold(tasks, e); err != nil {
			v := err.(Violation)
			v.Pos = i
			return tasks, v
		}
	}
	return tasks, nil
}
