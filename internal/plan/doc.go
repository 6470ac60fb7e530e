// Package plan reads and checks the plan directory described in docs/validation.md
// of the spec: locating .taskie/, plan ids, the tasks.md table, file names
// and the validation rules.
package plan
