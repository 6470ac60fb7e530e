package cli

import (
	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/taskrec"
)

// planRecords is every task of the plan as every view shows it: its one
// record (implied.View), with a shared store folded from every clone's
// lifecycle moves. What in sets (claims, results) is folded in too.
func planRecords(p *store.Plan, in taskrec.Input) []taskrec.Record {
	if in.Records == nil {
		if recs, shared := sharedLifecycle(p); shared && recs != nil {
			in.Records = recs
		}
	}
	return implied.View(p, nil, in)
}
