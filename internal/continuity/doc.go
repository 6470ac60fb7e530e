// Package continuity keeps a task's session continuity (docs/continuity.md) inside
// its task-{T}.md: the acceptance criteria, a Progress Log with one entry
// per session, and a Chain Output that the tasks depending on it receive as
// Chain Inputs. It also builds the context a fresh session starts from.
//
// The package has two layers. File, the criteria, session and chain output
// parsing and rendering, and Brief's rendering are pure: they take bytes and
// return bytes, and edit a task file without changing any byte they do not
// own (line endings included). The I/O layer (Note, Check, SetOutput,
// Criteria, Context) reads a plan through package project and rewrites
// task files atomically under the plan lock.
package continuity
