package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/store"
)

// A claim in one round trip (docs/fleet.md, "One round trip"): after the
// connection, each claim write is one pipelined message whose statement
// locks the task's row, writes the claim with its fencing token, its
// coordination event and the lifecycle move the machine decided for the
// state the task's shared record is in, and returns what it found and
// wrote. The rules of package parallel then decide again on what was
// found: a write they would not have made is reported, never hidden.

// clockCTE is the coordination clock of one statement ($6: the test skew).
const clockCTE = `clk AS (SELECT clock_timestamp() + $6::bigint * interval '1 microsecond' AS now)`

// lifeCTEs record the lifecycle lines chosen by the state of the task's
// shared record (the latest lifecycle event's "to"; "/mine" when assigned
// to $4), for the row of CTE w (its task column), when cond holds.
// $9 lifecycle kinds, $10 keys, $11 kinds of the lines, $12 lines.
func lifeCTEs(w, cond string) string {
	return `life AS (
  SELECT coalesce((SELECT (e.body->>'to') || CASE WHEN e.body->>'to' = 'assigned' AND e.body->'meta'->>'agent' = $4 THEN '/mine' ELSE '' END
    FROM taskie_events e WHERE e.project = $1 AND e.plan = $2 AND e.task = ` + w + `.task::text AND e.stream = 'plan' AND e.kind = ANY($9::text[])
    ORDER BY e.ts DESC, e.id DESC LIMIT 1), 'none') AS k
  FROM ` + w + `
),
lev AS (
  INSERT INTO taskie_events (project, plan, ts, kind, task, body, stream)
  SELECT $1, $2, date_trunc('second', clk.now), t.kind, ` + w + `.task::text,
    replace(replace(t.line, '"ts":"` + sentinelTS + `"', '"ts":"' || to_char(clk.now AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') || '"'),
      '"task":"` + strconv.Itoa(store.TaskSentinel) + `"', '"task":"' || ` + w + `.task::text || '"')::json, 'plan'
  FROM ` + w + `, clk, life, unnest($10::text[], $11::text[], $12::text[]) WITH ORDINALITY AS t(k, kind, line, ord)
  WHERE t.k = life.k AND (` + cond + `)
  ORDER BY t.ord
  RETURNING id, body::text
)`
}

var sentinelTS = store.TimeSentinel.Format(time.RFC3339)

// lifeArgs are $9–$12 of lifeCTEs.
func lifeArgs(m store.LifeMoves) ([]string, []string, []string, []string, error) {
	var keys, kinds, lines []string
	for _, k := range slices.Sorted(mapKeys(m.Lines)) {
		for _, l := range m.Lines[k] {
			var e struct {
				Event string `json:"event"`
			}
			if err := jsonUnmarshal(l, &e); err != nil || e.Event == "" {
				return nil, nil, nil, nil, fmt.Errorf("lifecycle line %q is no event", l)
			}
			keys, kinds, lines = append(keys, k), append(kinds, e.Event), append(lines, string(l))
		}
	}
	return lifeKinds, keys, kinds, lines, nil
}

// lifeKinds are the kinds of lifecycle events, whose "to" is the state
// the task is in after them.
var lifeKinds = []string{"TASK_CREATED", "STATE_TRANSITION", "FAILURE", "CTO_INTERVENTION", "ESCALATED", "RECOVERY", "TIMEOUT_WARNING"}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// claimNextSQL claims the first task of $3 that is free, expired, or
// agent $4's own from its place $5 (its own live claim first), leaving out
// those whose latest result is complete; $7 the lease in microseconds, $8
// its text for the event.
var claimNextSQL = `WITH ` + clockCTE + `,
pick AS (
  SELECT c.task, c.agent, ` + ts("c.acquired") + ` AS acquired, ` + ts("c.expires") + ` AS expires, ` + ts("c.heartbeat") + ` AS heartbeat, c.token, c.place,
    (c.agent = $4 AND NOT (c.place <> '' AND $5 <> '' AND c.place <> $5)) AS renew
  FROM unnest($3::int[]) WITH ORDINALITY AS r(task, ord)
  JOIN taskie_claims c ON c.project = $1 AND c.plan = $2 AND c.task = r.task
  CROSS JOIN clk
  WHERE c.result <> 'complete'
    AND (c.agent = '' OR c.expires <= clk.now OR (c.agent = $4 AND NOT (c.place <> '' AND $5 <> '' AND c.place <> $5)))
  ORDER BY (c.agent = $4 AND c.expires > clk.now) DESC, r.ord
  LIMIT 1
  FOR UPDATE OF c SKIP LOCKED
),
upd AS (
  UPDATE taskie_claims c SET agent = $4,
    acquired = CASE WHEN pick.renew THEN c.acquired ELSE clk.now END,
    expires = clk.now + $7::bigint * interval '1 microsecond',
    heartbeat = clk.now,
    token = CASE WHEN pick.renew THEN c.token ELSE c.token + 1 END,
    place = CASE WHEN $5 <> '' THEN $5 WHEN pick.renew THEN c.place ELSE '' END
  FROM pick, clk
  WHERE c.project = $1 AND c.plan = $2 AND c.task = pick.task
  RETURNING c.task, c.token, c.place, c.expires, pick.renew, pick.agent AS prev_agent, pick.expires AS prev_expires
),
ev AS (
  INSERT INTO taskie_events (project, plan, ts, kind, task, body)
  SELECT $1, $2, clk.now, k.kind, upd.task::text, json_strip_nulls(json_build_object(
    'ts', clk.now, 'plan', $2::text, 'task', upd.task::text, 'event', k.kind,
    'from', CASE WHEN k.kind = 'CLAIM_TAKEOVER' THEN upd.prev_agent END,
    'to', CASE WHEN k.kind = 'CLAIM_TAKEOVER' THEN $4::text END,
    'actor', $4::text,
    'reason', CASE WHEN k.kind = 'CLAIM_TAKEOVER' THEN 'lease of ' || upd.prev_agent || ' expired at ' || to_char(upd.prev_expires AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') END,
    'meta', json_build_object('expires', to_char(upd.expires AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), 'ttl', $8::text,
      'token', upd.token, 'place', nullif(upd.place, ''))))
  FROM upd, clk, LATERAL (SELECT CASE WHEN upd.prev_agent = '' THEN 'CLAIM' ELSE 'CLAIM_TAKEOVER' END AS kind) k
  WHERE NOT upd.renew
),
` + lifeCTEs("upd", "NOT upd.renew") + `
SELECT pick.task, pick.agent, pick.acquired, pick.expires, pick.heartbeat, pick.token, pick.place, clk.now, upd.token,
  (SELECT coalesce(array_agg(body ORDER BY id), '{}') FROM lev)
FROM pick, upd, clk`

// ClaimNextLife is ClaimNext in one round trip, recording the lifecycle
// move of the claim (moves) in the same statement; lines are the
// lifecycle events it recorded.
func (s *Store) ClaimNextLife(ctx context.Context, p store.PlanKey, ready []domain.TaskID, agent string, ttl time.Duration, f domain.Fence, moves store.LifeMoves) (d domain.ClaimDecision, ok bool, lines []string, err error) {
	if err := checkKey(p); err != nil {
		return d, false, nil, err
	}
	if len(ready) == 0 || agent == "" {
		return d, false, nil, nil
	}
	ttl = roundTTL(ttl)
	if ttl <= 0 {
		ttl = domain.DefaultLeaseTTL
	}
	ids := make([]int32, len(ready))
	for i, t := range ready {
		ids[i] = int32(t)
	}
	kinds, keys, lkinds, llines, err := lifeArgs(moves)
	if err != nil {
		return d, false, nil, err
	}
	var r claimRow
	var now time.Time
	var token int64
	err = s.do(ctx, "claiming the next ready task of plan "+p.Plan, func(ctx context.Context, conn *pgx.Conn) error {
		b := &pgx.Batch{}
		b.Queue(offerSQL, p.Project, p.Plan, ids)
		b.Queue("COMMIT")
		b.Queue(claimNextSQL, p.Project, p.Plan, ids, agent, f.Place, s.skewMicros(), ttl.Microseconds(), ttl.String(),
			kinds, keys, lkinds, llines)
		b.Queue("COMMIT")
		b.Queue(notifySQL, Channel, payload(p))
		br := conn.SendBatch(ctx, b)
		defer br.Close()
		if _, err := br.Exec(); err != nil {
			return err
		}
		if _, err := br.Exec(); err != nil {
			return err
		}
		err := br.QueryRow().Scan(append(r.dest(), &now, &token, &lines)...)
		if err == pgx.ErrNoRows {
			return nil
		}
		if err != nil {
			return err
		}
		ok = true
		if _, err := br.Exec(); err != nil {
			return err
		}
		return nil
	})
	if err != nil || !ok {
		return domain.ClaimDecision{}, false, nil, err
	}
	now = now.UTC()
	d = store.Rules().Claim(domain.TaskID(r.task), r.claim(), agent, f, now, ttl)
	if err := agrees(d, r, token); err != nil {
		return d, true, lines, err
	}
	d.Claim.Token = token
	return d, true, lines, nil
}

// agrees checks that what the statement wrote is what the rules decide on
// the row it found: granted or taken over with the next token, renewed
// with the same.
func agrees(d domain.ClaimDecision, found claimRow, token int64) error {
	want := found.token + 1
	switch d.Outcome {
	case domain.ClaimRenewed:
		want = found.token
	case domain.ClaimGranted, domain.ClaimTakeover:
	default:
		return fmt.Errorf("task %d: %w: the database claimed it, and taskie's rules refuse it (%v); release it (`taskie release %d --force`)", found.task, errDisagree, d.Err, found.task)
	}
	if token != want {
		return fmt.Errorf("task %d: %w: token %d written, %d decided", found.task, errDisagree, token, want)
	}
	return nil
}

var errDisagree = errors.New("the database's claim statement and taskie's claim rules disagree")

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
