package postgres

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/store"
)

// offerPickSQL is ClaimNext's first round trip as one simple-protocol
// message: the offer of the ready tasks' rows, committed on its own (the
// implicit transaction of the statements before COMMIT), then the claim's
// transaction opened and the first free row locked (nextSQL()). Three round
// trips per claim become two. Times come back as microseconds since the
// epoch, so that no session setting changes how they read.
const offerPickSQL = `SELECT set_config('synchronous_commit', 'off', true);
INSERT INTO taskie_claims (project, plan, task)
SELECT {project}, {plan}, t FROM unnest({ids}::int[]) AS t
WHERE NOT EXISTS (SELECT 1 FROM taskie_claims c WHERE c.project = {project} AND c.plan = {plan} AND c.task = t)
ORDER BY t
ON CONFLICT (project, plan, task) DO NOTHING;
COMMIT;
BEGIN;
SELECT c.task, c.agent, {us(c.acquired)}, {us(c.expires)}, {us(c.heartbeat)}, {us(now)}, c.token, c.place
FROM unnest({ids}::int[]) WITH ORDINALITY AS r(task, ord)
JOIN taskie_claims c ON c.project = {project} AND c.plan = {plan} AND c.task = r.task
WHERE c.agent = '' OR c.agent = {agent} OR c.expires <= {now}
ORDER BY r.ord
LIMIT 1
FOR UPDATE OF c SKIP LOCKED`

// errNoFastPath sends ClaimNext the way of three round trips: a session
// whose string literals do not follow the standard cannot take values
// written into the statement safely.
var errNoFastPath = errors.New("no single-message claim on this session")

// offerAndPick runs offerPickSQL on the pipe's connection, which opens the
// pipe's transaction; found is false when no row is free.
func (s *Store) offerAndPick(ctx context.Context, t *pipe, p store.PlanKey, ids []int32, agent string) (r claimRow, now time.Time, found bool, err error) {
	pc := t.conn.PgConn()
	if pc.ParameterStatus("standard_conforming_strings") != "on" {
		return r, now, false, errNoFastPath
	}
	arr := make([]string, len(ids))
	for i, id := range ids {
		arr[i] = strconv.Itoa(int(id))
	}
	nowExpr := "(clock_timestamp() + " + strconv.FormatInt(s.skewMicros(), 10) + " * interval '1 microsecond')"
	q := strings.NewReplacer(
		"{project}", literal(p.Project),
		"{plan}", literal(p.Plan),
		"{agent}", literal(agent),
		"{ids}", literal("{"+strings.Join(arr, ",")+"}"),
		"{us(c.acquired)}", micros(ts("c.acquired")),
		"{us(c.expires)}", micros(ts("c.expires")),
		"{us(c.heartbeat)}", micros(ts("c.heartbeat")),
		"{us(now)}", micros(nowExpr),
		"{now}", nowExpr,
	).Replace(offerPickSQL)
	results, err := pc.Exec(ctx, q).ReadAll()
	if pc.TxStatus() != 'I' {
		t.open = true // BEGIN ran: the transaction must end
	}
	if err != nil {
		return r, now, false, err
	}
	for _, res := range results {
		if res.Err != nil {
			return r, now, false, res.Err
		}
	}
	last := results[len(results)-1]
	if len(last.Rows) == 0 {
		return r, now, false, nil
	}
	row := last.Rows[0]
	task, err := strconv.ParseInt(string(row[0]), 10, 32)
	if err != nil {
		return r, now, false, err
	}
	r.task, r.agent = int32(task), string(row[1])
	if r.acquired, err = microsTime(row[2]); err == nil {
		if r.expires, err = microsTime(row[3]); err == nil {
			r.heartbeat, err = microsTime(row[4])
		}
	}
	tok, terr := strconv.ParseInt(string(row[6]), 10, 64)
	if terr != nil {
		return r, now, false, terr
	}
	r.token, r.place = tok, string(row[7])
	n, err2 := microsTime(row[5])
	if err = errors.Join(err, err2); err != nil || n == nil {
		return r, now, false, errors.Join(err, errors.New("no clock in the answer"))
	}
	return r, n.UTC(), true, nil
}

// literal quotes s as a standard SQL string literal (the session's
// standard_conforming_strings is on: a backslash is a character).
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// micros is a timestamp expression as microseconds since the epoch.
func micros(expr string) string {
	return "(extract(epoch from " + expr + ") * 1000000)::bigint"
}

// microsTime reads micros' text; NULL (nil) is no time.
func microsTime(v []byte) (*time.Time, error) {
	if v == nil {
		return nil, nil
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return nil, err
	}
	t := time.UnixMicro(n).UTC()
	return &t, nil
}
