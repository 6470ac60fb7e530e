package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/config"
	"github.com/taskie-dev/taskie/internal/fsafe"
	"github.com/taskie-dev/taskie/internal/gitwt"
	"github.com/taskie-dev/taskie/internal/history"
	"github.com/taskie-dev/taskie/internal/planmerge"
)

// mergeFileLimit bounds a plan file the merge driver reads.
const mergeFileLimit = 256 << 20

func newMergeDriverCmd(s *Streams, g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "merge-driver events|state|tasks %O %A %B %P",
		Short: "Merge a plan's events.jsonl or state.json (git runs it; plumbing)",
		Long: `The merge driver git runs for a plan's files, as taskie init registers it
(.gitattributes and this clone's git config; docs/fleet.md, "Merging plan
files"). events: the union of both sides' events in time order, written to
%A. state: the replay of that merged log, written to %A; exit 1 (a conflict
left to resolve) when a side's state.json was changed outside its log.
tasks: tasks.md line by line, each line from the side that changed it; exit 1
when both changed one line, or rows were added or removed.`,
		Hidden: true,
		Args:   exactArgs(5, "events|state and git's %O %A %B %P"),
		RunE: func(_ *cobra.Command, args []string) error {
			return runMergeDriver(s, g, args[0], args[1], args[2], args[3], args[4])
		},
	}
}

func runMergeDriver(s *Streams, g *globals, kind, o, a, b, p string) error {
	if kind != "events" && kind != "state" && kind != "tasks" {
		return usageErr(fmt.Errorf("merge-driver: unknown file kind %q", kind), "use events, state or tasks, as taskie init registers it")
	}
	cwd, err := g.cwd()
	if err != nil {
		return err
	}
	root, err := fsafe.Open(cwd)
	if err != nil {
		return err
	}
	defer root.Close()
	var sides [3][]byte
	for i, f := range []string{o, a, b} {
		rel, err := localPath(cwd, f)
		if err != nil {
			return err
		}
		if sides[i], err = root.ReadFileLimit(rel, mergeFileLimit); err != nil {
			return fmt.Errorf("merge-driver: %w", err)
		}
	}
	out, _ := localPath(cwd, a)
	if kind == "tasks" {
		merged, ok := planmerge.Tasks(sides[0], sides[1], sides[2])
		if !ok {
			fmt.Fprintf(s.Err, "taskie merge-driver: %s: both sides changed the same row, or added or removed rows: left as a conflict to resolve by hand\n", p)
			return errSilentProblems
		}
		return root.WriteFile(out, merged, true)
	}
	d := mergeDefaults(cwd, p)
	if kind == "events" {
		res := planmerge.Plan(sides[0], sides[1], sides[2], d)
		mergeNotes(s, p, res.Notes)
		return root.WriteFile(out, res.Log, true)
	}
	logs, err := sideLogs(cwd, path.Join(path.Dir(filepath.ToSlash(p)), "events.jsonl"), filepath.ToSlash(p), sides)
	if err == nil {
		for i, name := range []string{"ours", "theirs"} {
			if !planmerge.Agrees(logs[i+1], sides[i+1], d) {
				err = fmt.Errorf("%s: %s state.json was changed outside its events.jsonl, so the merged log cannot rebuild it", p, name)
			}
		}
	}
	if err != nil {
		fmt.Fprintf(s.Err, "taskie merge-driver: %v\n", err)
		fmt.Fprintf(s.Err, "taskie merge-driver: %s is left as a conflict: once the merge is done, `taskie recover --write --force` rebuilds it from the merged log; then `git add %s`\n", p, p)
		return errSilentProblems
	}
	res := planmerge.Plan(logs[0], logs[1], logs[2], d)
	mergeNotes(s, p, res.Notes)
	return root.WriteFile(out, res.State, true)
}

// errSilentProblems is exit 1 (git's "conflict") with the message printed.
var errSilentProblems = &exitError{code: ExitProblems, err: errSilent}

func mergeNotes(s *Streams, p string, notes []string) {
	for _, n := range notes {
		fmt.Fprintf(s.Err, "taskie merge-driver: %s: %s\n", p, n)
	}
}

// localPath is f (a file git named) relative to cwd; it must lie inside.
func localPath(cwd, f string) (string, error) {
	rel := f
	if filepath.IsAbs(f) {
		r, err := filepath.Rel(cwd, f)
		if err != nil {
			return "", err
		}
		rel = r
	}
	if !filepath.IsLocal(rel) {
		return "", usageErr(fmt.Errorf("merge-driver: %s: not a file inside the repository", f), "git runs the driver with its own temporary files")
	}
	return filepath.ToSlash(rel), nil
}

// mergeDefaults are the plan defaults a replay starts from: the project's
// config (.taskie/config.json, two levels above the plan directory).
func mergeDefaults(cwd, p string) history.Defaults {
	cfg := config.Default()
	if dir := path.Dir(path.Dir(path.Dir(filepath.ToSlash(p)))); path.Base(dir) == ".taskie" {
		if c, err := config.Load(filepath.Join(cwd, filepath.FromSlash(dir))); err == nil {
			cfg = c
		}
	}
	return history.Defaults{MaxReviews: &cfg.MaxReviews, Models: cfg.Models}
}

// sideLogs finds the events.jsonl that goes with each state.json git hands
// the driver (git merges the files of a plan one by one, state.json
// before events.jsonl): the commits being merged are among HEAD and the
// heads git names for a merge, cherry-pick or rebase, and the one whose
// state.json is the side's is taken, so a wrong guess is never used. The
// base is their merge base (or the picked commit's parent).
func sideLogs(cwd, logPath, statePath string, states [3][]byte) ([3][]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), gitwt.Timeout)
	defer cancel()
	git := func(args ...string) (string, error) { return gitwt.Run(ctx, cwd, args...) }
	blob := func(commit, p string) ([]byte, bool) {
		out, err := git("cat-file", "blob", commit+":"+p)
		return []byte(out), err == nil
	}
	same := func(commit string, want []byte) bool {
		got, ok := blob(commit, statePath)
		if !ok {
			return len(bytes.TrimSpace(want)) == 0
		}
		return bytes.Equal(got, bytes.TrimSpace(want))
	}
	revs := []string{"HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REBASE_HEAD", "REVERT_HEAD", "ORIG_HEAD", "FETCH_HEAD"}
	for _, kv := range os.Environ() {
		// git merge names the commits it merges in GITHEAD_<sha>.
		if k, _, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "GITHEAD_") {
			revs = append(revs, strings.TrimPrefix(k, "GITHEAD_"))
		}
	}
	var commits []string
	for _, r := range revs {
		if c, err := git("rev-parse", "-q", "--verify", r+"^{commit}"); err == nil && c != "" {
			commits = append(commits, c)
		}
	}
	find := func(want []byte, among []string) string {
		for _, c := range among {
			if same(c, want) {
				return c
			}
		}
		return ""
	}
	ours, theirs := find(states[1], commits[:min(1, len(commits))]), ""
	for _, c := range commits {
		if c != ours && same(c, states[2]) {
			theirs = c
			break
		}
	}
	if ours == "" || theirs == "" {
		return [3][]byte{}, errors.New(statePath + ": cannot find the commits being merged to read both sides' events.jsonl")
	}
	var logs [3][]byte
	logs[1], _ = blob(ours, logPath)
	logs[2], _ = blob(theirs, logPath)
	bases := []string{theirs + "^"}
	if mb, err := git("merge-base", "--all", ours, theirs); err == nil {
		bases = append(strings.Fields(mb), bases...)
	}
	var resolved []string
	for _, r := range bases {
		if c, err := git("rev-parse", "-q", "--verify", r+"^{commit}"); err == nil {
			resolved = append(resolved, c)
		}
	}
	if base := find(states[0], resolved); base != "" {
		logs[0], _ = blob(base, logPath)
	}
	return logs, nil
}
