package cli

import (
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/store"
)

// snapRecord is task's lifecycle record in a snapshot; false when it has
// none, or the records do not decode (`taskie validate` reports them).
func snapRecord(snap *store.Snapshot, task domain.TaskID) (lifecycle.Task, bool) {
	if snap == nil || snap.State == nil {
		return lifecycle.Task{}, false
	}
	recs, err := lifecycle.Decode(snap.State.Lifecycle)
	if err != nil {
		return lifecycle.Task{}, false
	}
	t, ok := recs[task]
	return t, ok
}
