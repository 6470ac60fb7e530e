package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
)

// HeldName is the clone's own record of the claims its runners were
// granted, with their fencing tokens: a later command of the same agent
// from the same place presents the token recorded here, so that a holder
// whose claim was taken over is refused by its token whichever store
// holds the claims (docs/parallel.md, "Identity and fencing").
const HeldName = "held.json"

// maxHeld bounds the record: the oldest entries go first.
const maxHeld = 1000

// Held is one claim a runner of this clone was granted.
type Held struct {
	Task  domain.TaskID `json:"task,string"`
	Agent string        `json:"agent"`
	Place string        `json:"place"`
	Token int64         `json:"token"`
	At    time.Time     `json:"at"`
}

// RecordHeld records that agent at place was granted task's claim with
// token, replacing its earlier record for the task; a token ≤ 0 only
// drops that record (the agent released its claim itself).
func (c *FileCoord) RecordHeld(ctx context.Context, p PlanKey, h Held) error {
	if c.holds {
		return nil // the claim itself keeps its token (HeldToken)
	}
	var err error
	if lerr := c.Records(ctx, p, func(tx *CoordTx) { err = tx.RecordHeld(h) }); lerr != nil {
		return lerr
	}
	return err
}

// HeldToken is the token recorded for agent's claim on task from place;
// ok is false when none is.
//
// When the files hold the claims, the token is the claim's own, or that
// of the agent's claim that was taken over or released by force (kept in
// claims.json); held.json is read only for a claim granted before that
// (by an earlier taskie).
func (c *FileCoord) HeldToken(p PlanKey, task domain.TaskID, agent, place string) (int64, bool, error) {
	if c.holds {
		f, err := c.readClaimsFile(p)
		if err != nil {
			return 0, false, err
		}
		if t, ok := f.heldToken(task, agent, place); ok {
			return t, true, nil
		}
	}
	hs, err := c.readHeld(p)
	if err != nil {
		return 0, false, err
	}
	for _, h := range slices.Backward(hs) {
		if h.Task == task && h.Agent == agent && h.Place == place {
			return h.Token, true, nil
		}
	}
	return 0, false, nil
}

func (c *FileCoord) readHeld(p PlanKey) ([]Held, error) {
	rel, err := c.rel(p, HeldName)
	if err != nil {
		return nil, err
	}
	data, err := c.root.ReadFileLimit(rel, 4<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if hs, ok := decodeHeld(data); ok {
		return hs, nil
	}
	var hs []Held
	if err := json.Unmarshal(data, &hs); err != nil {
		return nil, fmt.Errorf("%s: malformed record of held claims: %v; remove it (the claims themselves are kept)", c.root.Path(rel), err)
	}
	return hs, nil
}
