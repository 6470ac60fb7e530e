-- taskie schema version 3: fenced claims. token is the fencing token of
-- the task's claim: a claim granted or taken over gets the task's last
-- token plus one, so a holder that lost its claim presents a lower token
-- and its heartbeats, results and releases are refused. A free row keeps
-- its token, the floor of the next claim's. place is where the holder
-- runs (machine, clone, worktree): its name used from another place is
-- refused while the claim is live. Rows from before get token 0 and place
-- '' (not known).
ALTER TABLE taskie_claims ADD COLUMN token bigint NOT NULL DEFAULT 0;
ALTER TABLE taskie_claims ADD COLUMN place text NOT NULL DEFAULT '';
