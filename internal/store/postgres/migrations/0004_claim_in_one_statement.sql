-- taskie schema version 4: a claim in one statement. result is the status
-- of the task's latest TASK_RESULT ('' none, 'complete', 'failed', 'retry'),
-- kept with every result written, so that `claim --next` leaves out the
-- tasks whose work is complete without reading the log. The index finds a
-- task's events (its lifecycle record, its results) without reading the
-- plan's whole log.
ALTER TABLE taskie_claims ADD COLUMN result text NOT NULL DEFAULT '';

CREATE INDEX taskie_events_task ON taskie_events (project, plan, task, ts, id);

INSERT INTO taskie_claims (project, plan, task, result)
SELECT DISTINCT ON (e.project, e.plan, e.task) e.project, e.plan, e.task::integer, coalesce(e.body->'meta'->>'status', '')
FROM taskie_events e
WHERE e.stream = 'coord' AND e.kind = 'TASK_RESULT' AND e.task ~ '^[0-9]{1,9}$'
ORDER BY e.project, e.plan, e.task, e.id DESC
ON CONFLICT (project, plan, task) DO UPDATE SET result = EXCLUDED.result;
