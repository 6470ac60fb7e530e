-- taskie schema version 2: the plan events of every clone (phase changes,
-- field sets, lifecycle moves, ownership, reviews, findings, progress)
-- beside the coordination events, in one log per plan, so that history,
-- log and query read every clone's events in database order.
--
-- stream says which log an event belongs to: 'coord' (claims, takeovers,
-- releases, task results: the coordination log) or 'plan' (the plan's
-- events.jsonl). key identifies a plan event across clones and re-runs:
-- the SHA-256 of its line as events.jsonl holds it, so that mirroring the
-- same line twice, or importing a log that already went through git to
-- another clone, adds it once. Coordination events have no key (NULL never
-- conflicts).
ALTER TABLE taskie_events ADD COLUMN stream text NOT NULL DEFAULT 'coord';
ALTER TABLE taskie_events ADD COLUMN key text;
CREATE UNIQUE INDEX taskie_events_key ON taskie_events (project, plan, key);
