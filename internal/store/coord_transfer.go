package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
)

// PlanData is everything a coordination store holds for one plan: its
// claims, live and expired, and its coordination events in log order.
type PlanData struct {
	Claims []domain.Claim
	Events []events.Event
}

// Empty reports whether there is nothing to move.
func (d PlanData) Empty() bool { return len(d.Claims) == 0 && len(d.Events) == 0 }

// Replacer is a coordination store whose data for a plan can be replaced
// whole, in one transaction: what `taskie store import|export` write.
type Replacer interface {
	ReplacePlan(ctx context.Context, p PlanKey, d PlanData) error
}

// ReadPlan reads a plan's coordination data from c.
func ReadPlan(ctx context.Context, c Coordination, p PlanKey) (PlanData, error) {
	var d PlanData
	var err error
	if d.Claims, err = c.Claims(ctx, p); err != nil {
		return d, err
	}
	err = c.ScanEvents(ctx, p, func(e events.Event) { d.Events = append(d.Events, e) })
	return d, err
}

// ErrNotEmpty refuses to copy a plan's coordination data over data already
// there.
var ErrNotEmpty = fmt.Errorf("the destination already holds coordination data for the plan")

// CopyPlan copies a plan's coordination data from one store to another,
// claims and events as they are (times, agents, event fields), and returns
// what it copied. A destination that already holds data for the plan is
// refused with ErrNotEmpty unless replace is set (a source with nothing to
// copy copies nothing, whatever the destination holds); the source is
// left as it is.
func CopyPlan(ctx context.Context, from Coordination, fromKey PlanKey, to Coordination, toKey PlanKey, replace bool) (PlanData, error) {
	dst, ok := to.(Replacer)
	if !ok {
		return PlanData{}, fmt.Errorf("the destination store cannot be written whole")
	}
	d, err := ReadPlan(ctx, from, fromKey)
	if err != nil {
		return d, err
	}
	if !replace && d.Empty() {
		return d, nil // nothing to copy, nothing to overwrite
	}
	if !replace {
		there, err := ReadPlan(ctx, to, toKey)
		if err != nil {
			return d, err
		}
		if !there.Empty() {
			return d, fmt.Errorf("plan %s: %w (%d claims, %d events)", toKey.Plan, ErrNotEmpty, len(there.Claims), len(there.Events))
		}
	}
	for i := range d.Events {
		d.Events[i].Plan = toKey.Plan
	}
	return d, dst.ReplacePlan(ctx, toKey, d)
}

// ReplacePlan replaces the plan's claims.json and events.jsonl with d,
// under the plan's coordination lock: the files `taskie store export`
// writes, in the file store's own format.
func (c *FileCoord) ReplacePlan(ctx context.Context, p PlanKey, d PlanData) error {
	claims := make(map[domain.TaskID]domain.Claim, len(d.Claims))
	for _, cl := range d.Claims {
		claims[cl.Task] = cl
	}
	var log bytes.Buffer
	for _, e := range d.Events {
		line, err := json.Marshal(e)
		if err != nil {
			return err
		}
		log.Write(line)
		log.WriteByte('\n')
	}
	return c.locked(ctx, p, func(time.Time) error {
		rel, err := c.rel(p, CoordLogName)
		if err != nil {
			return err
		}
		// The log first, as every change of the file store: a crash
		// between the two leaves the events of claims not yet written.
		if err := c.root.WriteFile(rel, log.Bytes(), c.Durable); err != nil {
			return err
		}
		// Tokens never go back: the last one issued here stays the floor.
		f := claimsFile{claims: claims}
		if old, err := c.readClaimsFile(p); err == nil {
			f.last = old.last
		}
		return c.writeClaims(p, f)
	})
}
