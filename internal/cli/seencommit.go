package cli

import (
	"context"
	"fmt"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/parallel"

	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/taskrec"
)

// seenCommits says, for each task whose commit is made while the plan
// still records it in committing, that the reads count it done but
// tasks.md, which no read writes, says so only at the next write — and
// the command that records it now (docs/lifecycle.md).
func seenCommits(p *store.Plan) []string {
	st, err := p.State()
	if err != nil || st == nil || !lifecycle.AwaitsCommit(st) {
		return nil
	}
	tasks, err := taskrec.Records(st)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range implied.SettledView(p, tasks) {
		if e.To != string(lifecycle.Completed) {
			continue
		}
		as := ""
		if id, err := domain.ParseTaskID(e.Task); err == nil {
			if h := claimHolder(p, id); h != "" {
				as = " --as " + h // the claim guards the write until then
			}
		}
		out = append(out, fmt.Sprintf("task %s: its commit is seen: tasks.md says done at the next write (`taskie task status %s done%s%s` records it now)", e.Task, e.Task, as, p.PlanFlag()))
	}
	return out
}

// claimHolder is the agent holding a live claim on task, "" when none or
// the claims cannot be read.
func claimHolder(p *store.Plan, task domain.TaskID) string {
	ctx := context.Background()
	c, proj, err := openCoordination(ctx, p)
	if err != nil {
		return ""
	}
	defer c.Close()
	claims, err := c.Claims(ctx, store.PlanKey{Project: proj, Plan: p.ID})
	if err != nil {
		return ""
	}
	if h := parallel.ClaimOf(claims, task); h != nil {
		return h.Agent
	}
	return ""
}
