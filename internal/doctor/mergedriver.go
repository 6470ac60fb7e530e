package doctor

import (
	"strings"

	"github.com/taskie-dev/taskie/internal/install"
)

// mergeDriver checks that this clone runs taskie's merge drivers for plan
// files. .gitattributes comes with the repository, the git config does
// not: a fresh clone lacks it, and git then merges events.jsonl and
// state.json as text, with conflict markers.
func mergeDriver(root string) (Check, bool) {
	if root == "" || !install.InGit(root) {
		return Check{}, false
	}
	const name = "merge driver"
	if missing := install.MissingDriverConfig(root); len(missing) > 0 {
		return Check{Name: name, Detail: "this clone's git config lacks " + strings.Join(missing, ", ") +
			": git would merge plan files (events.jsonl, state.json) as text, with conflict markers",
			Fix: "run `taskie init` in " + root + " (it registers the drivers; docs/fleet.md, \"Merging plan files\")"}, true
	}
	return Check{Name: name, OK: true, Detail: "plan files merge with `taskie merge-driver`"}, true
}
