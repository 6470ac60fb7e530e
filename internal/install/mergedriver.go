package install

import (
	"context"
	"errors"
	"io/fs"
	"strings"

	"github.com/taskie-dev/taskie/internal/fsafe"
	"github.com/taskie-dev/taskie/internal/gitwt"
)

// The merge drivers of a plan's files (docs/fleet.md, "Merging plan
// files"). .gitattributes, committed, names them; each clone's git config
// says what they run, and that is always taskie's own fixed command: a
// repository can name a driver but never choose the program it runs.
var (
	// AttributeLines are the .gitattributes lines taskie writes.
	AttributeLines = []string{
		".taskie/plans/*/events.jsonl merge=taskie-events",
		".taskie/plans/*/state.json merge=taskie-state",
		".taskie/plans/*/tasks.md merge=taskie-tasks",
		// a task finished twice (its lease lapsed and another clone
		// redid it) has two output files: keep both sides' text
		".taskie/plans/*/task-*-output.md merge=union",
	}
	// DriverConfig is the git config each clone needs: key → value.
	DriverConfig = [][2]string{
		{"merge.taskie-events.name", "taskie: union of a plan's events in time order"},
		{"merge.taskie-events.driver", "taskie merge-driver events %O %A %B %P"},
		{"merge.taskie-state.name", "taskie: a plan's state.json replayed from the merged events"},
		{"merge.taskie-state.driver", "taskie merge-driver state %O %A %B %P"},
		{"merge.taskie-tasks.name", "taskie: a plan's tasks.md, row by row (Status cells render each side's moves)"},
		{"merge.taskie-tasks.driver", "taskie merge-driver tasks %O %A %B %P"},
	}
)

const attributesLimit = 1 << 20

// MergeDriver registers the plan-file merge drivers in the project at
// root, when it is in a git work tree: the .gitattributes lines it lacks
// (other lines kept) and this clone's config. It returns what changed.
func MergeDriver(root string) ([]Change, error) {
	if !InGit(root) {
		return nil, nil
	}
	r, err := fsafe.Open(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var changes []Change
	const ga = ".gitattributes"
	data, err := r.ReadFileLimit(ga, attributesLimit)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	text := string(data)
	var missing []string
	for _, l := range AttributeLines {
		if !hasAttrLine(text, l) {
			missing = append(missing, l)
		}
	}
	if len(missing) > 0 {
		action := "updated"
		if data == nil {
			action = "created"
		}
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		text += "# written by taskie: merge a plan's files without conflicts (docs/fleet.md)\n" + strings.Join(missing, "\n") + "\n"
		if err := r.WriteFile(ga, []byte(text), true); err != nil {
			return nil, err
		}
		changes = append(changes, Change{Path: r.Path(ga), Action: action, What: "names taskie's merge drivers for plan files"})
	}
	ctx, cancel := context.WithTimeout(context.Background(), gitwt.Timeout)
	defer cancel()
	set := false
	for _, kv := range DriverConfig {
		if cur, err := gitwt.Run(ctx, root, "config", "--local", "--get", kv[0]); err == nil && cur == kv[1] {
			continue
		}
		if _, err := gitwt.Run(ctx, root, "config", "--local", kv[0], kv[1]); err != nil {
			return changes, err
		}
		set = true
	}
	if set {
		changes = append(changes, Change{Path: "git config merge.taskie-*", Action: "updated", What: "this clone runs `taskie merge-driver` for plan files"})
	}
	return changes, nil
}

// InGit reports whether dir is inside a git work tree.
func InGit(dir string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), gitwt.Timeout)
	defer cancel()
	out, err := gitwt.Run(ctx, dir, "rev-parse", "--is-inside-work-tree")
	return err == nil && out == "true"
}

// MissingDriverConfig lists the merge-driver settings this clone lacks or
// holds with another value (git config --get, which reads every scope).
func MissingDriverConfig(dir string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), gitwt.Timeout)
	defer cancel()
	var out []string
	for _, kv := range DriverConfig {
		if !strings.HasSuffix(kv[0], ".driver") {
			continue
		}
		if cur, err := gitwt.Run(ctx, dir, "config", "--get", kv[0]); err != nil || cur != kv[1] {
			out = append(out, kv[0])
		}
	}
	return out
}

func hasAttrLine(text, line string) bool {
	want := strings.Fields(line)
	for _, l := range strings.Split(text, "\n") {
		if f := strings.Fields(l); len(f) == len(want) && strings.Join(f, " ") == strings.Join(want, " ") {
			return true
		}
	}
	return false
}

// ProjectMergeDriver is MergeDriver for an install run in a taskie
// project (t.Root holds .taskie/); elsewhere it does nothing.
func ProjectMergeDriver(t Target) ([]Change, error) {
	if t.Root == "" {
		return nil, nil
	}
	r, err := fsafe.Open(t.Root)
	if err != nil {
		return nil, nil
	}
	fi, err := r.Stat(".taskie")
	r.Close()
	if err != nil || !fi.IsDir() {
		return nil, nil
	}
	return MergeDriver(t.Root)
}
