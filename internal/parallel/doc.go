// Package parallel decides who may run what, and when, for parallel
// execution (docs/parallel.md). It is pure: it reads no files, runs no git and asks
// no clock; the caller passes the plan's tasks, the stored claims and "now",
// and stores what the decisions say. The store makes claims atomic; this
// package is the policy.
//
// Decisions, in one place:
//
//   - Priority: a lower rank runs first. Words map to ranks — critical,
//     urgent and highest 0, high 1, medium and normal 2, low 3, lowest 4 —
//     and numbers are taken as written ("1" and "P1" are 1, like high), so
//     the P0/P1 convention and high/medium/low order the same way. An empty
//     cell or no Priority column is medium; an unknown word is medium and
//     reported as a Problem.
//   - Inherited priority: a task runs at the best priority of the tasks
//     that wait on it, directly or not, so a low-priority task that blocks
//     a high-priority one is not starved. Ready and Groups both order by
//     (inherited priority, own priority, id).
//   - Dependencies: a dependency is satisfied when the task it names is
//     done or cancelled (cancelled work is not coming, so it must not hold
//     its dependents forever; the plan's author revises them). A dependency
//     on an unknown id is never satisfied and is reported.
//   - Files: a Files column, when its cell for the task is not empty, is
//     the task's file set ("-" and "none" mean no files); otherwise the
//     paths named in the task file are used (see FilesIn). A path ending in
//     "/" is a directory and overlaps every path under it; a glob
//     ("internal/x/*.go") stands for its directory. A task with no known
//     files overlaps nothing.
//   - Ready: pending tasks, and in-progress tasks whose lease has expired
//     (an abandoned claim is reclaimable). Postponed and blocked tasks were
//     parked by a person and are never ready; done and cancelled never.
//   - Groups plans every task that is not done or cancelled, postponed and
//     blocked ones included (their reasons say so): it is the shape of the
//     remaining work, while Ready says what may start now. GroupsAside
//     leaves out what the caller sets aside — failed tasks with every task
//     that waits on them, and finished ones (result complete), whose
//     dependents are planned as if they were done — so that neither holds
//     a wave slot or a file.
//   - Own claims: "claim --next" gives an agent back the first, in the
//     same order as Ready, of the pending or in-progress tasks it holds
//     live (OwnLive).
//   - Leases: a claim is live while now is before Expires; at Expires it
//     has expired. Arrows in cycle messages read "depends on".
package parallel
