package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/store"
)

// A claim in one round trip (docs/fleet.md, "One round trip"): after the
// connection, each claim write is one pipelined message whose statement
// locks the task's row, writes the claim with its fencing token, its
// coordination event and the lifecycle move the machine decided for the
// state the task's shared record is in, and returns what it found and
// wrote. The rules of package parallel then decide again on what was
// found: a write they would not have made is reported, never hidden.

// clockCTE is the coordination clock of one statement ($6: the test
// skew): now for leases, sec, to the second, for the events, which carry
// the time as a file store's do. Ties between events keep the order the
// database received them in, a write's coordination event before its
// lifecycle lines.
const clockCTE = `clk AS (SELECT x AS now, date_trunc('second', x) AS sec FROM (SELECT clock_timestamp() + $6::bigint * interval '1 microsecond') c(x))`

// lifeCTEs record the lifecycle lines chosen by the state of the task's
// shared record (the latest lifecycle event's "to"; "/mine" when assigned
// to $4), for the task of CTE src (its task column), when cond holds.
// $9 lifecycle kinds, $10 keys, $11 kinds of the lines, $12 lines. The
// lines are recorded after CTE first (the write's own coordination event,
// with a RETURNING clause), at the second of both.
func lifeCTEs(src, cond string, first ...string) string {
	return lifeCTEsKeyed(src, cond, "life.k", first...)
}

// lifeCTEsKeyed is lifeCTEs choosing the lines of key (an expression of
// life.k) instead of life.k.
func lifeCTEsKeyed(src, cond, key string, first ...string) string {
	counts := make([]string, len(first))
	for i, f := range first {
		counts[i] = "(SELECT count(*) FROM " + f + ")"
	}
	return `life AS (
  SELECT coalesce((SELECT (e.body->>'to') || CASE WHEN e.body->>'to' = 'assigned' AND e.body->'meta'->>'agent' = $4 THEN '/mine' ELSE '' END
    FROM taskie_events e WHERE e.project = $1 AND e.plan = $2 AND e.task = ` + src + `.task::text AND e.stream = 'plan' AND e.kind = ANY($9::text[])
    ORDER BY e.ts DESC, e.id DESC LIMIT 1), 'none') AS k
  FROM ` + src + `
),
lev AS (
  INSERT INTO taskie_events (project, plan, ts, kind, task, body, stream)
  SELECT $1, $2, clk.sec, t.kind, ` + src + `.task::text,
    replace(replace(t.line, '"ts":"` + sentinelTS + `"', '"ts":"' || ` + rfc3339("clk.sec") + ` || '"'),
      '"task":"` + strconv.Itoa(store.TaskSentinel) + `"', '"task":"' || ` + src + `.task::text || '"')::json, 'plan'
  FROM ` + src + `, clk, life, (SELECT ` + strings.Join(counts, " + ") + `) AS w(n),
    unnest($10::text[], $11::text[], $12::text[]) WITH ORDINALITY AS t(k, kind, line, ord)
  WHERE t.k = ` + key + ` AND (` + cond + `) AND w.n >= 0 -- w.n read: the events counted are written first
  ORDER BY t.ord
  RETURNING id, body::text
)`
}

// rfc3339 is a whole-second timestamptz expr as a file store writes an
// event's time: RFC 3339 in UTC, whatever the session's time zone.
func rfc3339(expr string) string {
	return `to_char((` + expr + `) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`
}

// sentinelTS is store.TimeSentinel in RFC 3339 (TestSentinelTS): a constant, so
// nothing is built at start.
const sentinelTS = "2000-01-01T00:00:00Z"

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
// those whose latest result is complete, and those of $13 (in progress in
// tasks.md) that were never claimed and whose last result did not fail;
// $7 the lease in microseconds, $8 its text for the event.
func claimNextSQL() string {
	return `WITH ` + clockCTE + `,
pick AS (
  SELECT c.task, c.agent, ` + ts("c.acquired") + ` AS acquired, ` + ts("c.expires") + ` AS expires, ` + ts("c.heartbeat") + ` AS heartbeat, c.token, c.place,
    (c.agent = $4 AND NOT (c.place <> '' AND $5 <> '' AND c.place <> $5)) AS renew
  FROM unnest($3::int[]) WITH ORDINALITY AS r(task, ord)
  JOIN taskie_claims c ON c.project = $1 AND c.plan = $2 AND c.task = r.task
  CROSS JOIN clk
  WHERE c.result <> 'complete'
    AND (NOT (c.task = ANY($13::int[])) OR c.token > 0 OR c.result = 'failed')
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
  SELECT $1, $2, clk.sec, k.kind, upd.task::text, json_strip_nulls(json_build_object(
    'ts', ` + rfc3339("clk.sec") + `, 'plan', $2::text, 'task', upd.task::text, 'event', k.kind,
    'from', CASE WHEN k.kind = 'CLAIM_TAKEOVER' THEN upd.prev_agent END,
    'to', CASE WHEN k.kind = 'CLAIM_TAKEOVER' THEN $4::text END,
    'actor', $4::text,
    'reason', CASE WHEN k.kind = 'CLAIM_TAKEOVER' THEN 'lease of ' || upd.prev_agent || ' expired at ' || to_char(upd.prev_expires AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') END,
    'meta', json_build_object('expires', to_char(upd.expires AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), 'ttl', $8::text,
      'token', upd.token, 'place', nullif(upd.place, ''))))
  FROM upd, clk, LATERAL (SELECT CASE WHEN upd.prev_agent = '' THEN 'CLAIM' ELSE 'CLAIM_TAKEOVER' END AS kind) k
  WHERE NOT upd.renew
  RETURNING 1
),
` + lifeCTEs("upd", "NOT upd.renew", "ev") + `
SELECT pick.task, pick.agent, pick.acquired, pick.expires, pick.heartbeat, pick.token, pick.place, clk.now, upd.token,
  (SELECT coalesce(array_agg(body ORDER BY id), '{}') FROM lev)
FROM pick, upd, clk`
}

// ClaimNextLife is ClaimNext in one round trip, recording the lifecycle
// move of the claim (moves) in the same statement; lines are the
// lifecycle events it recorded.
func (s *Store) ClaimNextLife(ctx context.Context, p store.PlanKey, ready, inProgress []domain.TaskID, agent string, ttl time.Duration, f domain.Fence, moves store.LifeMoves) (d domain.ClaimDecision, ok bool, lines []string, err error) {
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
	ids, busy := int32s(ready), int32s(inProgress)
	kinds, keys, lkinds, llines, err := lifeArgs(moves)
	if err != nil {
		return d, false, nil, err
	}
	var r claimRow
	var now time.Time
	var token int64
	err = s.do(ctx, "claiming the next ready task of plan "+p.Plan, func(ctx context.Context, conn *pgx.Conn) error {
		br, err := sendOffered(ctx, conn, p, ids, claimNextSQL(), p.Project, p.Plan, ids, agent, f.Place, s.skewMicros(), ttl.Microseconds(), ttl.String(),
			kinds, keys, lkinds, llines, busy)
		if err != nil {
			return err
		}
		defer br.Close()
		err = br.QueryRow().Scan(append(r.dest(), &now, &token, &lines)...)
		if err == pgx.ErrNoRows {
			return nil
		}
		if err != nil {
			return err
		}
		ok = true
		return committed(br)
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

// claimSQL claims task $3 for agent $4 from place $5 as the rules do —
// free: granted; the agent's own: renewed (from another place: refused
// while live, else taken over); another agent's, expired: taken over —
// unless the task's shared record is in a state of $13 or its latest
// result is complete; $7 the lease in microseconds, $8 its text.
func claimSQL() string {
	return `WITH ` + clockCTE + `, ` + curCTE() + `,
` + strings.Replace(lifeCTEs("tgt", "EXISTS (SELECT 1 FROM upd WHERE NOT upd.renew)", "ev"), "\n),\nlev AS", `
),
dec AS (
  SELECT CASE
      WHEN cur.task IS NULL OR cur.agent = '' THEN 'grant'
      WHEN cur.agent = $4 AND cur.place <> '' AND $5 <> '' AND cur.place <> $5 THEN CASE WHEN cur.raw_expires > clk.now THEN 'refuse' ELSE 'takeover' END
      WHEN cur.agent = $4 THEN 'renew'
      WHEN cur.raw_expires <= clk.now THEN 'takeover'
      ELSE 'refuse' END AS k,
    (life.k = ANY($13::text[]) OR coalesce(cur.result = 'complete', false)) AS closed
  FROM clk LEFT JOIN cur ON true, life
),
upd AS (
  UPDATE taskie_claims c SET agent = $4,
    acquired = CASE WHEN dec.k = 'renew' THEN c.acquired ELSE clk.now END,
    expires = clk.now + $7::bigint * interval '1 microsecond',
    heartbeat = clk.now,
    token = CASE WHEN dec.k = 'renew' THEN c.token ELSE c.token + 1 END,
    place = CASE WHEN $5 <> '' THEN $5 WHEN dec.k = 'renew' THEN c.place ELSE '' END
  FROM dec, clk, cur
  WHERE c.project = $1 AND c.plan = $2 AND c.task = $3 AND dec.k <> 'refuse' AND NOT dec.closed
  RETURNING c.task, c.token, c.place, c.expires, dec.k = 'renew' AS renew, cur.agent AS prev_agent, cur.raw_expires AS prev_expires
),
ev AS (
  INSERT INTO taskie_events (project, plan, ts, kind, task, body)
  SELECT $1, $2, clk.sec, k.kind, upd.task::text, json_strip_nulls(json_build_object(
    'ts', `+rfc3339("clk.sec")+`, 'plan', $2::text, 'task', upd.task::text, 'event', k.kind,
    'from', CASE WHEN k.kind = 'CLAIM_TAKEOVER' THEN upd.prev_agent END,
    'to', CASE WHEN k.kind = 'CLAIM_TAKEOVER' THEN $4::text END,
    'actor', $4::text,
    'reason', CASE WHEN k.kind = 'CLAIM_TAKEOVER' THEN 'lease of ' || upd.prev_agent || ' expired at ' || `+rfc3339("upd.prev_expires")+` END,
    'meta', json_build_object('expires', `+rfc3339("upd.expires")+`, 'ttl', $8::text,
      'token', upd.token, 'place', nullif(upd.place, ''))))
  FROM upd, clk, LATERAL (SELECT CASE WHEN upd.prev_agent = '' THEN 'CLAIM' ELSE 'CLAIM_TAKEOVER' END AS kind) k
  WHERE NOT upd.renew
  RETURNING 1
),
lev AS`, 1) + `
SELECT ` + curCols + `, clk.now, coalesce((SELECT token FROM upd), 0), EXISTS (SELECT 1 FROM upd), life.k, dec.closed,
  CASE WHEN cur.result = 'complete' THEN coalesce((SELECT e.body->'meta'->>'commit' FROM taskie_events e
    WHERE e.project = $1 AND e.plan = $2 AND e.task = $3::text AND e.stream = 'coord' AND e.kind = 'TASK_RESULT'
    ORDER BY e.ts DESC, e.id DESC LIMIT 1), '?') ELSE '' END,
  (SELECT coalesce(array_agg(body ORDER BY id), '{}') FROM lev)
FROM clk LEFT JOIN cur ON true, life, dec`
}

// ClaimLife is Claim in one round trip, recording the lifecycle move of
// the claim (moves) in the same statement; a task whose shared record is
// in a state of moves.Refuse, or whose latest result is complete, is not
// claimed (Closed).
func (s *Store) ClaimLife(ctx context.Context, p store.PlanKey, task domain.TaskID, agent string, ttl time.Duration, f domain.Fence, moves store.LifeMoves) (store.Claimed, error) {
	var c store.Claimed
	if err := checkKey(p); err != nil {
		return c, err
	}
	ttl = roundTTL(ttl)
	if ttl <= 0 {
		ttl = domain.DefaultLeaseTTL
	}
	if agent == "" {
		c.Decision = store.Rules().Claim(task, nil, agent, f, time.Time{}, ttl)
		return c, nil
	}
	kinds, keys, lkinds, llines, err := lifeArgs(moves)
	if err != nil {
		return c, err
	}
	refuse := moves.Refuse
	if refuse == nil {
		refuse = []string{}
	}
	var r claimRow
	var now time.Time
	var token int64
	var written bool
	err = s.do(ctx, fmt.Sprintf("claiming task %d of plan %s", task, p.Plan), func(ctx context.Context, conn *pgx.Conn) error {
		br, err := sendOffered(ctx, conn, p, []int32{int32(task)}, claimSQL(), p.Project, p.Plan, int32(task), agent, f.Place, s.skewMicros(), ttl.Microseconds(), ttl.String(),
			kinds, keys, lkinds, llines, refuse)
		if err != nil {
			return err
		}
		defer br.Close()
		if err := br.QueryRow().Scan(append(r.dest(), &now, &token, &written, &c.LifeKey, &c.Closed, &c.Complete, &c.Lines)...); err != nil {
			return err
		}
		return committed(br)
	})
	if err != nil {
		return store.Claimed{}, err
	}
	d := store.Rules().Claim(task, r.claim(), agent, f, now.UTC(), ttl)
	c.Decision = d
	switch {
	case !written && (c.Closed || d.Outcome == domain.ClaimRefused):
		return c, nil
	case !written:
		return c, fmt.Errorf("task %d: %w: nothing written, %s decided", task, errDisagree, d.Outcome)
	}
	if err := agrees(d, r, token); err != nil {
		return c, err
	}
	c.Decision.Claim.Token = token
	return c, nil
}

// curCTE locks the row of task $3, when it has one, with its columns as
// claimRow scans them, its latest result and its raw expiry.
func curCTE() string {
	return `tgt AS (SELECT $3::int AS task),
cur AS (
  SELECT c.task, c.agent, ` + ts("c.acquired") + ` AS acquired, ` + ts("c.expires") + ` AS expires, ` + ts("c.heartbeat") + ` AS heartbeat,
    c.token, c.place, c.result, c.expires AS raw_expires
  FROM taskie_claims c WHERE c.project = $1 AND c.plan = $2 AND c.task = $3
  FOR UPDATE
)`
}

// curCols are cur's claimRow columns; a task without a row reads as free.
const curCols = `coalesce(cur.task, $3::int), coalesce(cur.agent, ''), cur.acquired, cur.expires, cur.heartbeat, coalesce(cur.token, 0), coalesce(cur.place, '')`

// fenceOK is the fence in SQL ($4 agent, $5 place, $7 token): a token
// presented is the claim's and agent holds it; the agent's live claim is
// not held from another place. (ClaimRules.Fence decides it again on the
// row found.)
const fenceOK = tokenOK + `
  AND ` + placeOK

// tokenOK and placeOK are the two halves of fenceOK: a forced write is
// still refused a stale token.
const (
	tokenOK = `NOT ($7::bigint > 0 AND (cur.task IS NULL OR cur.token <> $7::bigint OR cur.agent <> $4))`
	placeOK = `NOT coalesce(cur.agent = $4 AND cur.place <> '' AND $5 <> '' AND cur.place <> $5 AND cur.raw_expires > clk.now, false)`
)

// heartbeatSQL renews agent $4's lease on task $3 by $8 microseconds.
func heartbeatSQL() string {
	return `WITH ` + clockCTE + `, ` + curCTE() + `,
upd AS (
  UPDATE taskie_claims c SET expires = clk.now + $8::bigint * interval '1 microsecond', heartbeat = clk.now,
    place = CASE WHEN $5 <> '' THEN $5 ELSE c.place END
  FROM cur, clk
  WHERE c.project = $1 AND c.plan = $2 AND c.task = $3 AND cur.agent = $4 AND ` + fenceOK + `
  RETURNING c.task
)
SELECT ` + curCols + `, clk.now, EXISTS (SELECT 1 FROM upd) FROM clk LEFT JOIN cur ON true`
}

// HeartbeatOne is Heartbeat in one round trip: the fence and the renewal
// in one statement.
func (s *Store) HeartbeatOne(ctx context.Context, p store.PlanKey, task domain.TaskID, agent string, ttl time.Duration, f domain.Fence) (domain.ClaimDecision, error) {
	if err := checkKey(p); err != nil {
		return domain.ClaimDecision{}, err
	}
	ttl = roundTTL(ttl)
	if ttl <= 0 {
		ttl = domain.DefaultLeaseTTL
	}
	var r claimRow
	var now time.Time
	var written bool
	err := s.one(ctx, fmt.Sprintf("renewing the lease on task %d of plan %s", task, p.Plan), p, heartbeatSQL(),
		[]any{p.Project, p.Plan, int32(task), agent, f.Place, s.skewMicros(), f.Token, ttl.Microseconds()},
		append(r.dest(), &now, &written)...)
	if err != nil {
		return domain.ClaimDecision{}, err
	}
	d := store.Rules().Heartbeat(task, r.claim(), agent, f, now.UTC(), ttl)
	if (d.Outcome == domain.ClaimRenewed) != written {
		return domain.ClaimDecision{}, fmt.Errorf("task %d: %w: renewed %v, decided %s", task, errDisagree, written, d.Outcome)
	}
	return d, nil
}

// releaseSQL lets agent $4's claim on task $3 go, with its event and the
// lifecycle move ($13: not when the task's latest result is complete).
func releaseSQL() string {
	return `WITH ` + clockCTE + `, ` + curCTE() + `,
upd AS (
  UPDATE taskie_claims c SET agent = '', acquired = NULL, expires = NULL, heartbeat = NULL, place = ''
  FROM cur, clk
  WHERE c.project = $1 AND c.plan = $2 AND c.task = $3 AND cur.agent = $4 AND $4 <> '' AND ` + fenceOK + `
    AND $8::bigint = 0 -- no lease: $8 keeps the numbering of the other writes
  RETURNING c.task, c.result
),
ev AS (
  INSERT INTO taskie_events (project, plan, ts, kind, task, body)
  SELECT $1, $2, clk.sec, 'RELEASE', upd.task::text, json_build_object('ts', ` + rfc3339("clk.sec") + `, 'plan', $2::text, 'task', upd.task::text, 'event', 'RELEASE', 'actor', $4::text)
  FROM upd, clk
  RETURNING 1
),
` + lifeCTEs("upd", "NOT ($13::boolean AND upd.result = 'complete')", "ev") + `
SELECT ` + curCols + `, clk.now, EXISTS (SELECT 1 FROM upd), (SELECT coalesce(array_agg(body ORDER BY id), '{}') FROM lev)
FROM clk LEFT JOIN cur ON true`
}

// ReleaseLife is Release in one round trip, recording the lifecycle move
// of the release (moves) in the same statement.
func (s *Store) ReleaseLife(ctx context.Context, p store.PlanKey, task domain.TaskID, agent string, f domain.Fence, moves store.LifeMoves) (domain.ClaimDecision, []string, error) {
	if err := checkKey(p); err != nil {
		return domain.ClaimDecision{}, nil, err
	}
	kinds, keys, lkinds, llines, err := lifeArgs(moves)
	if err != nil {
		return domain.ClaimDecision{}, nil, err
	}
	var r claimRow
	var now time.Time
	var written bool
	var lines []string
	err = s.one(ctx, fmt.Sprintf("releasing task %d of plan %s", task, p.Plan), p, releaseSQL(),
		[]any{p.Project, p.Plan, int32(task), agent, f.Place, s.skewMicros(), f.Token, int64(0), kinds, keys, lkinds, llines, moves.UnlessComplete},
		append(r.dest(), &now, &written, &lines)...)
	if err != nil {
		return domain.ClaimDecision{}, nil, err
	}
	d := store.Rules().Release(task, r.claim(), agent, f, now.UTC())
	if (d.Outcome == domain.ClaimReleased) != written {
		return domain.ClaimDecision{}, nil, fmt.Errorf("task %d: %w: released %v, decided %s", task, errDisagree, written, d.Outcome)
	}
	return d, lines, nil
}

// writeSQL appends events ($14 kinds, $15 tasks, $16 lines whose
// sentinel time becomes the clock) for task $3 while agent $4, presenting
// place $5 and token $7, may write to it — the fence, and no live claim of
// another agent — and its lifecycle record is not in a state of $13 (the
// machine refuses the move there); with the task's result status $8 and
// the lifecycle move.
func writeSQL() string {
	return `WITH ` + clockCTE + `, ` + curCTE() + `,
` + strings.Replace(lifeCTEs("tgt", "EXISTS (SELECT 1 FROM ok)", "ins", "ovr"), "\n),\nlev AS", `
),
ok AS (
  SELECT 1 FROM clk LEFT JOIN cur ON true, life
  WHERE `+tokenOK+`
    AND ($17 OR (`+placeOK+`
      AND (cur.task IS NULL OR cur.agent = '' OR cur.raw_expires <= clk.now OR cur.agent = $4)))
    AND NOT (life.k = ANY($13::text[]))
),
frc AS (
  SELECT coalesce($17 AND cur.agent <> '' AND cur.raw_expires > clk.now
      AND (cur.agent <> $4 OR (cur.place <> '' AND $5 <> '' AND cur.place <> $5)), false) AS f,
    cur.agent AS holder, cur.raw_expires AS expires
  FROM clk LEFT JOIN cur ON true
),
ins AS (
  INSERT INTO taskie_events (project, plan, ts, kind, task, body)
  SELECT $1, $2, clk.sec, e.kind, e.task, replace(replace(e.line, '"ts":"`+sentinelTS+`"', '"ts":"' || `+rfc3339("clk.sec")+` || '"'),
      '`+holderJSON+`', coalesce(to_json(frc.holder)::text, '""'))::json
  FROM frc, clk, unnest($14::text[], $15::text[], CASE WHEN frc.f THEN $19::text[] ELSE $16::text[] END) WITH ORDINALITY AS e(kind, task, line, ord)
  WHERE EXISTS (SELECT 1 FROM ok)
  ORDER BY e.ord
  RETURNING 1
),
ovr AS (
  INSERT INTO taskie_events (project, plan, ts, kind, task, body)
  SELECT $1, $2, clk.sec, 'CLAIM_OVERRIDE', $3::text, replace(replace(replace($18::text,
      '"ts":"`+sentinelTS+`"', '"ts":"' || `+rfc3339("clk.sec")+` || '"'),
      '"expires":"`+sentinelTS+`"', '"expires":"' || `+rfc3339("frc.expires")+` || '"'),
      '`+holderJSON+`', to_json(frc.holder)::text)::json
  FROM frc, clk, (SELECT count(*) FROM ins) AS w(n)
  WHERE frc.f AND EXISTS (SELECT 1 FROM ok)
  RETURNING 1
),
lev AS`, 1) + `,
res AS (
  INSERT INTO taskie_claims (project, plan, task, result) SELECT $1, $2, $3, $8 FROM ok WHERE $8 <> ''
  ON CONFLICT (project, plan, task) DO UPDATE SET result = EXCLUDED.result
)
SELECT ` + curCols + `, clk.now, EXISTS (SELECT 1 FROM ok), life.k, (SELECT coalesce(array_agg(body ORDER BY id), '{}') FROM lev)
FROM clk LEFT JOIN cur ON true, life`
}

// holderJSON is store.HolderMarker as a JSON string.
const holderJSON = `"\u0000holder"`

// AppendWriteLife appends evs for task in one round trip, atomically with
// the check that agent may write to it (the fence: a token presented is
// the claim's; no live claim of another agent) and with the lifecycle
// move of the write (moves; a state of moves.Refuse writes nothing). The
// caller decides again on what was found (package parallel's rules).
func (s *Store) AppendWriteLife(ctx context.Context, p store.PlanKey, task domain.TaskID, agent string, f domain.Fence, moves store.LifeMoves, evs ...events.Event) (store.Written, error) {
	return s.writeLife(ctx, p, task, agent, f, moves, nil, evs)
}

// AppendForcedLife is AppendWriteLife with --force: a live claim of
// another holder (or of agent from another place) does not stop it, and
// is logged as overridden with the events of ov.Forced; a stale token is
// refused all the same.
func (s *Store) AppendForcedLife(ctx context.Context, p store.PlanKey, task domain.TaskID, agent string, f domain.Fence, moves store.LifeMoves, ov store.Override, evs ...events.Event) (store.Written, error) {
	if len(ov.Forced) != len(evs) {
		return store.Written{}, fmt.Errorf("task %d: %d forced events for %d", task, len(ov.Forced), len(evs))
	}
	return s.writeLife(ctx, p, task, agent, f, moves, &ov, evs)
}

// writeLife is AppendWriteLife, forced when ov is not nil.
func (s *Store) writeLife(ctx context.Context, p store.PlanKey, task domain.TaskID, agent string, f domain.Fence, moves store.LifeMoves, ov *store.Override, evs []events.Event) (store.Written, error) {
	var w store.Written
	if err := checkKey(p); err != nil {
		return w, err
	}
	kinds, keys, lkinds, llines, err := lifeArgs(moves)
	if err != nil {
		return w, err
	}
	status := ""
	ekinds, etasks, elines := make([]string, len(evs)), make([]string, len(evs)), make([]string, len(evs))
	line := func(e events.Event) (string, error) {
		if e.TS.IsZero() {
			e.TS = store.TimeSentinel
		}
		if e.Plan == "" {
			e.Plan = p.Plan
		}
		b, err := json.Marshal(e)
		return string(b), err
	}
	for i, e := range evs {
		if elines[i], err = line(e); err != nil {
			return w, err
		}
		ekinds[i], etasks[i] = e.Event, e.Task
		if e.Event == store.EventTaskResult && e.Task == task.String() {
			m, _ := events.MetaOf[events.TaskResultMeta](e)
			status = m.Status
		}
	}
	force, override, forced := false, "", []string{}
	if ov != nil {
		// The override's event, its holder and the holder's expiry filled
		// in by the statement.
		force = true
		override, err = line(events.Event{Task: task.String(), Event: events.ClaimOverride, Actor: agent, From: store.HolderMarker,
			Reason: ov.Command + " with --force over a live claim",
			Meta:   events.Meta(events.ClaimOverrideMeta{Command: ov.Command, Holder: store.HolderMarker, Expires: store.TimeSentinel})})
		if err != nil {
			return w, err
		}
		for _, e := range ov.Forced {
			l, err := line(e)
			if err != nil {
				return w, err
			}
			forced = append(forced, l)
		}
	}
	refuse := moves.Refuse
	if refuse == nil {
		refuse = []string{}
	}
	var r claimRow
	err = s.one(ctx, fmt.Sprintf("writing for task %d of plan %s", task, p.Plan), p, writeSQL(),
		[]any{p.Project, p.Plan, int32(task), agent, f.Place, s.skewMicros(), f.Token, status, kinds, keys, lkinds, llines, refuse, ekinds, etasks, elines,
			force, override, forced},
		append(r.dest(), &w.Now, &w.Written, &w.LifeKey, &w.Lines)...)
	if err != nil {
		return store.Written{}, err
	}
	w.Found, w.Now = r.claim(), w.Now.UTC()
	return w, nil
}

// failSQL writes a failed result for task $3 by agent $4 as writeSQL
// writes, counting the attempt (the failed results since the last
// deliberate retry, plus one): $14 are the result's lines by attempt
// (their last one for every attempt after, the marker standing for its
// number), $15 the lines' kind. The agent's claim is released with it;
// the lifecycle lines are those of key "k", or "r" when the claim was
// released, written only while the task's latest lifecycle event is $8
// (the record they were decided on).
func failSQL() string {
	return `WITH ` + clockCTE + `, ` + curCTE() + `,
att AS (
  SELECT 1 + count(*) AS n FROM taskie_events e
  WHERE e.project = $1 AND e.plan = $2 AND e.task = $3::text AND e.stream = 'coord' AND e.kind = 'TASK_RESULT'
    AND e.body->'meta'->>'status' = 'failed'
    AND e.id > coalesce((SELECT max(r.id) FROM taskie_events r WHERE r.project = $1 AND r.plan = $2 AND r.task = $3::text
      AND r.stream = 'coord' AND r.kind = 'TASK_RESULT' AND r.body->'meta'->>'status' = 'retry'), 0)
),
lid AS (
  SELECT coalesce((SELECT e.id FROM taskie_events e WHERE e.project = $1 AND e.plan = $2 AND e.task = $3::text AND e.stream = 'plan'
    AND e.kind = ANY($9::text[]) ORDER BY e.ts DESC, e.id DESC LIMIT 1), 0) AS id
),
` + strings.Replace(lifeCTEsKeyed("tgt", "EXISTS (SELECT 1 FROM ok)", "(CASE WHEN EXISTS (SELECT 1 FROM rel) THEN 'r' ELSE 'k' END)", "rev"), "\n),\nlev AS", `
),
ok AS (
  SELECT 1 FROM clk LEFT JOIN cur ON true, lid
  WHERE `+fenceOK+`
    AND (cur.task IS NULL OR cur.agent = '' OR cur.raw_expires <= clk.now OR cur.agent = $4)
    AND lid.id = $8::bigint AND cardinality($13::text[]) = 0
),
rel AS (
  UPDATE taskie_claims c SET agent = '', acquired = NULL, expires = NULL, heartbeat = NULL, place = '', result = 'failed'
  FROM cur, ok
  WHERE c.project = $1 AND c.plan = $2 AND c.task = $3 AND cur.agent = $4 AND $4 <> ''
  RETURNING c.task
),
res AS (
  INSERT INTO taskie_claims (project, plan, task, result) SELECT $1, $2, $3, 'failed' FROM ok WHERE NOT EXISTS (SELECT 1 FROM rel)
  ON CONFLICT (project, plan, task) DO UPDATE SET result = EXCLUDED.result
),
ins AS (
  INSERT INTO taskie_events (project, plan, ts, kind, task, body)
  SELECT $1, $2, clk.sec, $15, $3::text, replace(replace(($14::text[])[least(att.n, cardinality($14::text[]))],
      '"ts":"`+sentinelTS+`"', '"ts":"' || `+rfc3339("clk.sec")+` || '"'), '`+strconv.Itoa(store.AttemptMarker)+`', att.n::text)::json
  FROM ok, att, clk
  RETURNING 1
),
rev AS (
  INSERT INTO taskie_events (project, plan, ts, kind, task, body)
  SELECT $1, $2, clk.sec, 'RELEASE', rel.task::text, json_build_object('ts', `+rfc3339("clk.sec")+`, 'plan', $2::text, 'task', rel.task::text, 'event', 'RELEASE', 'actor', $4::text)
  FROM rel, clk, (SELECT count(*) FROM ins) AS w(n)
  RETURNING 1
),
lev AS`, 1) + `
SELECT ` + curCols + `, clk.now, EXISTS (SELECT 1 FROM ok), att.n, EXISTS (SELECT 1 FROM rel), life.k, lid.id,
  (SELECT coalesce(array_agg(body ORDER BY id), '{}') FROM lev)
FROM clk LEFT JOIN cur ON true, life, att, lid`
}

// AppendFailLife writes a failed result for task in one round trip:
// atomically with the fence (as AppendWriteLife), the attempt it counts,
// the release of agent's claim and the lifecycle move. The caller decides
// again on what was found.
func (s *Store) AppendFailLife(ctx context.Context, p store.PlanKey, task domain.TaskID, agent string, f domain.Fence, w store.FailWrite) (store.Failed, error) {
	var out store.Failed
	if err := checkKey(p); err != nil {
		return out, err
	}
	if len(w.Results) == 0 {
		return out, fmt.Errorf("task %d: a failed result with no event", task)
	}
	kinds, keys, lkinds, llines, err := lifeArgs(store.LifeMoves{Lines: map[string][][]byte{"k": w.Kept, "r": w.Released}})
	if err != nil {
		return out, err
	}
	refuse := []string{}
	results := make([]string, len(w.Results))
	for i, l := range w.Results {
		results[i] = string(l)
	}
	var r claimRow
	var attempt int64
	err = s.one(ctx, fmt.Sprintf("writing the failed result of task %d of plan %s", task, p.Plan), p, failSQL(),
		[]any{p.Project, p.Plan, int32(task), agent, f.Place, s.skewMicros(), f.Token, w.At, kinds, keys, lkinds, llines, refuse, results, store.EventTaskResult},
		append(r.dest(), &out.Now, &out.Written.Written, &attempt, &out.Released, &out.LifeKey, &out.At, &out.Lines)...)
	if err != nil {
		return store.Failed{}, err
	}
	out.Found, out.Now, out.Attempt = r.claim(), out.Now.UTC(), int(attempt)
	return out, nil
}

// TaskLife reads task's shared lifecycle record: its plan events of
// kinds (and of the lifecycle kinds a one-statement write looks at), in
// the order history folds them, and the id of the latest lifecycle event
// (0: none), which FailWrite.At names.
func (s *Store) TaskLife(ctx context.Context, p store.PlanKey, task domain.TaskID, kinds []string) (lines [][]byte, at int64, err error) {
	if err := checkKey(p); err != nil {
		return nil, 0, err
	}
	err = s.do(ctx, fmt.Sprintf("reading the lifecycle of task %d of plan %s", task, p.Plan), func(ctx context.Context, conn *pgx.Conn) error {
		lines, at = nil, 0
		rows, err := conn.Query(ctx, `SELECT id, kind = ANY($5::text[]), body::text FROM taskie_events
WHERE project = $1 AND plan = $2 AND task = $3 AND stream = 'plan' AND (kind = ANY($4::text[]) OR kind = ANY($5::text[]))
ORDER BY ts, id`, p.Project, p.Plan, task.String(), kinds, lifeKinds)
		if err != nil {
			return err
		}
		var id int64
		var life bool
		var body []byte
		_, err = pgx.ForEachRow(rows, []any{&id, &life, &body}, func() error {
			if life {
				at = id
			}
			lines = append(lines, slices.Clone(body))
			return nil
		})
		return err
	})
	return lines, at, err
}

// one runs statement q in one round trip, its commit with it and the
// plan's notification after, and scans its one row into dest.
func (s *Store) one(ctx context.Context, what string, p store.PlanKey, q string, args []any, dest ...any) error {
	return s.do(ctx, what, func(ctx context.Context, conn *pgx.Conn) error {
		b := &pgx.Batch{}
		b.Queue(q, args...)
		b.Queue("COMMIT")
		b.Queue(notifySQL, Channel, payload(p))
		br := conn.SendBatch(ctx, b)
		defer br.Close()
		if err := br.QueryRow().Scan(dest...); err != nil {
			return err
		}
		return committed(br)
	})
}

// sendOffered sends the offer of the rows of ids, committed at once so
// that claim statement q, in its own transaction after, locks them (two
// first claims queue on a row), then q, its commit and the plan's
// notification. br is left at q's answer, for the caller to read and close.
func sendOffered(ctx context.Context, conn *pgx.Conn, p store.PlanKey, ids []int32, q string, args ...any) (pgx.BatchResults, error) {
	b := &pgx.Batch{}
	b.Queue(offerSQL, p.Project, p.Plan, ids)
	b.Queue("COMMIT")
	b.Queue(q, args...)
	b.Queue("COMMIT")
	b.Queue(notifySQL, Channel, payload(p))
	br := conn.SendBatch(ctx, b)
	for range 2 {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return nil, err
		}
	}
	return br, nil
}

// committed reads the answer to the COMMIT of a batch: a transaction the
// server rolled back is an error, nothing of it was stored.
func committed(br pgx.BatchResults) error {
	tag, err := br.Exec()
	if err == nil && tag.String() != "COMMIT" {
		err = fmt.Errorf("the transaction was rolled back (%s)", tag)
	}
	return err
}

func int32s(ids []domain.TaskID) []int32 {
	out := make([]int32, len(ids))
	for i, t := range ids {
		out[i] = int32(t)
	}
	return out
}

// Fenced runs write while task's claim row is locked in a transaction
// (made first when the task has none), after check has accepted the claim
// as found under the lock: no claim, takeover, renewal or release of the
// task slips between the check and the end of the write
// (store.FenceLocker). write must not use this Store's connection.
func (s *Store) Fenced(ctx context.Context, p store.PlanKey, task domain.TaskID, check func(cur *domain.Claim, now time.Time) error, write func() error) error {
	if err := checkKey(p); err != nil {
		return err
	}
	var refused error
	err := s.do(ctx, fmt.Sprintf("holding the claim of task %d of plan %s", task, p.Plan), func(ctx context.Context, conn *pgx.Conn) error {
		t := &pipe{conn: conn}
		var r claimRow
		var now time.Time
		err := t.queryRow(ctx, lockTaskSQL(), []any{p.Project, p.Plan, int32(task), s.skewMicros()}, append(r.dest(), &now)...)
		if err == nil {
			if refused = check(r.claim(), now.UTC()); refused == nil {
				refused = write()
			}
			if refused == nil {
				_, err = conn.Exec(ctx, "COMMIT")
				t.open = err != nil
			}
		}
		if t.open {
			rollback(conn)
		}
		return err
	})
	return cmp.Or(refused, err)
}

var _ store.FenceLocker = (*Store)(nil)
