-- taskie coordination schema, version 1 (docs/fleet.md): the claims with leases
-- and the coordination events of every plan, keyed by project (the
-- repository's identity across clones) and plan id. Plan content stays in
-- git. Migrations only ever add, so that an older taskie keeps working on
-- a schema a newer one has upgraded.

-- One row per task that was ever claimed or offered to ClaimNext. A free
-- task's row has agent '' and no times: rows exist so that a claim can
-- lock them (SELECT … FOR UPDATE [SKIP LOCKED]).
CREATE TABLE taskie_claims (
    project   text        NOT NULL,
    plan      text        NOT NULL,
    task      integer     NOT NULL,
    agent     text        NOT NULL DEFAULT '',
    acquired  timestamptz,
    expires   timestamptz,
    heartbeat timestamptz,
    PRIMARY KEY (project, plan, task),
    CONSTRAINT taskie_claims_held CHECK ((agent = '') = (expires IS NULL))
);

-- The coordination events of a plan in log order (id). body is the event
-- exactly as events.jsonl writes it (json keeps its text); ts, kind and
-- task repeat fields of it for queries.
CREATE TABLE taskie_events (
    id      bigserial   PRIMARY KEY,
    project text        NOT NULL,
    plan    text        NOT NULL,
    ts      timestamptz NOT NULL DEFAULT now(),
    kind    text        NOT NULL,
    task    text        NOT NULL DEFAULT '',
    body    json        NOT NULL
);

CREATE INDEX taskie_events_plan ON taskie_events (project, plan, id);
