package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/ledger"
)

// TestEveryJSONCommandHasJQ walks the command tree: a command that prints
// --json also takes --jq.
func TestEveryJSONCommandHasJQ(t *testing.T) {
	s, _, _ := testStreams("")
	n := 0
	walk(newRootCmd(s), func(c *cobra.Command) {
		if c.Flags().Lookup("json") == nil {
			return
		}
		n++
		if c.Flags().Lookup("jq") == nil {
			t.Errorf("%s has --json but no --jq", c.CommandPath())
		}
	})
	if n < 20 {
		t.Errorf("found %d commands with --json, want at least 20", n)
	}
}

// listing is one listing command as the header test runs it.
type listing struct {
	args []string
	// rows finds the listed objects in the --json output; nil: an array,
	// or JSON lines.
	rows func(any) []any
	// view is the type of a row, for the keys when the fixture lists none.
	view any
	// prefix are piped columns before the row's keys (groups: the wave).
	prefix []string
	// omit are keys of --json that the table leaves out, and why.
	omit []string
}

// TestListingHeaders runs every listing command piped on a fixture: its
// first line is the header, and the header is the keys of a row of its
// --json output, in order (keys that --json leaves out when empty may be
// missing from the row). Exceptions, and why:
//   - groups: --json is one object whose waves hold the tasks; the table
//     is one row per task, its wave first.
//   - findings: --json is one object (plan, review, trend) whose findings
//     are the rows.
//   - history: --json prints each event as the log holds it; the table
//     leaves out the commit's own record (set, sha and the like), which
//     only replay and recover read.
//   - log is prose by design ("[time] EVENT: message"), status without
//     --all and store status are reports, not lists: no header.
func TestListingHeaders(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	write := func(rel, text string) {
		path := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".taskie/plans/p/plan.md", "# Plan\n")
	write(".taskie/plans/p/tasks.md", "| Id | Status | Title | Depends on |\n|----|--------|-------|----|\n| 1 | pending | one | |\n| 2 | pending | two | |\n| 3 | pending | three | 1 |\n")
	write(".taskie/plans/p/state.json", `{"phase": "next-task", "next_phase": null}`)
	t.Setenv("TASKIE_NOW", "2026-03-01T09:00:00Z")
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	for _, env := range []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1"} {
		k, v, _ := strings.Cut(env, "=")
		t.Setenv(k, v)
	}
	for _, args := range [][]string{{"git", "init", "-q", "-b", "main"}, {"git", "add", "-A"}, {"git", "commit", "-q", "-m", "plan"}} {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	run := func(args ...string) string {
		t.Helper()
		s, out, errOut := testStreams("")
		if code := Run(append([]string{"-C", dir}, args...), *s); code != 0 {
			t.Fatalf("taskie %s: exit %d\n%s", strings.Join(args, " "), code, errOut)
		}
		return out.String()
	}
	run("claim", "2", "--as", "alice")
	run("worktree", "add", "2", "--as", "alice")
	run("trust")

	field := func(k string) func(any) []any {
		return func(v any) []any { a, _ := v.(map[string]any)[k].([]any); return a }
	}
	for _, l := range []listing{
		{args: []string{"ready"}, view: readyView{}},
		{args: []string{"groups"}, view: placementView{}, prefix: []string{"wave"}, rows: func(v any) []any {
			var out []any
			for _, w := range field("waves")(v) {
				out = append(out, w.(map[string]any)["tasks"].([]any)...)
			}
			return out
		}},
		{args: []string{"query"}, view: queryView{}},
		{args: []string{"query", "--stuck"}, view: queryView{}},
		{args: []string{"query", "--metrics"}, view: queryView{}},
		{args: []string{"query", "--claimed"}, view: claimStatusView{}},
		{args: []string{"query", "--needs-you"}, view: needsView{}},
		{args: []string{"history"}, omit: []string{"set", "unset", "lifecycle", "tasks", "archive", "sha", "prev", "tsha", "tprev", "prev_file", "tprev_file"}},
		{args: []string{"findings"}, view: ledger.Finding{}, rows: field("findings")},
		{args: []string{"worktree", "list"}, view: worktreeView{}},
		{args: []string{"plan", "list"}, view: planRow{}},
		{args: []string{"status", "--all"}, view: planRow{}},
		{args: []string{"task", "list"}, view: taskListView{}},
		{args: []string{"trust", "--list"}, view: trustListed{}},
	} {
		t.Run(strings.Join(l.args, " "), func(t *testing.T) {
			piped := run(l.args...)
			header, _, _ := strings.Cut(piped, "\n")
			got := strings.Split(header, "\t")
			if !slices.Equal(got[:min(len(l.prefix), len(got))], l.prefix) {
				t.Fatalf("header %q does not start with %q", header, l.prefix)
			}
			got = got[len(l.prefix):]
			rows := jsonRows(t, run(append(l.args, "--json")...), l.rows)
			var want []string
			if len(rows) > 0 {
				want = slices.DeleteFunc(rows[0], func(k string) bool { return slices.Contains(l.omit, k) })
				// keys --json leaves out when empty: missing from the row
				got = slices.DeleteFunc(got, func(k string) bool { return !slices.Contains(want, k) && omitEmpty(l.view, k) })
			} else {
				want = jsonKeys(reflect.TypeOf(l.view))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("piped header of taskie %s is not the --json keys (-want +got):\n%s", strings.Join(l.args, " "), diff)
			}
		})
	}
}

// jsonRows returns the keys, in order, of each object that rows finds in
// out (an array, one object, or JSON lines).
func jsonRows(t *testing.T, out string, rows func(any) []any) [][]string {
	t.Helper()
	var keys [][]string
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatal(err)
		}
		switch {
		case rows != nil:
			keys = append(keys, orderedKeysOf(raw, rows)...)
		case bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")):
			var arr []json.RawMessage
			_ = json.Unmarshal(raw, &arr)
			for _, r := range arr {
				keys = append(keys, orderedKeys(t, r))
			}
		default:
			keys = append(keys, orderedKeys(t, raw))
		}
	}
	return keys
}

// orderedKeysOf finds the objects rows selects in raw and returns their
// keys in the order of raw's text.
func orderedKeysOf(raw json.RawMessage, rows func(any) []any) [][]string {
	var v any
	_ = json.Unmarshal(raw, &v)
	var out [][]string
	for _, o := range rows(v) {
		b, _ := json.Marshal(o)
		var m map[string]json.RawMessage
		_ = json.Unmarshal(b, &m)
		out = append(out, keysInTextOrder(raw, m))
	}
	return out
}

// keysInTextOrder orders m's keys as the first object of raw holding all
// of them lists them.
func keysInTextOrder(raw []byte, m map[string]json.RawMessage) []string {
	var found []string
	var visit func(json.RawMessage) bool
	visit = func(r json.RawMessage) bool {
		r = bytes.TrimSpace(r)
		switch {
		case bytes.HasPrefix(r, []byte("{")):
			ks := orderedKeys(nil, r)
			if len(ks) == len(m) && !slices.ContainsFunc(ks, func(k string) bool { _, ok := m[k]; return !ok }) {
				var obj map[string]json.RawMessage
				_ = json.Unmarshal(r, &obj)
				same := true
				for k, v := range obj {
					var a, b any
					_ = json.Unmarshal(v, &a)
					_ = json.Unmarshal(m[k], &b)
					same = same && reflect.DeepEqual(a, b)
				}
				if same {
					found = ks
					return true
				}
			}
			var obj map[string]json.RawMessage
			_ = json.Unmarshal(r, &obj)
			for _, v := range obj {
				if visit(v) {
					return true
				}
			}
		case bytes.HasPrefix(r, []byte("[")):
			var arr []json.RawMessage
			_ = json.Unmarshal(r, &arr)
			for _, v := range arr {
				if visit(v) {
					return true
				}
			}
		}
		return false
	}
	visit(raw)
	return found
}

// orderedKeys lists an object's keys in the order of its text.
func orderedKeys(t *testing.T, raw []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		if t != nil {
			t.Fatalf("not an object: %s", raw)
		}
		return nil
	}
	var keys []string
	for dec.More() {
		tok, _ := dec.Token()
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		_ = dec.Decode(&skip)
	}
	return keys
}

// jsonKeys are the JSON keys of a struct type, embedded structs flattened.
func jsonKeys(typ reflect.Type) []string {
	var keys []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag := f.Tag.Get("json")
		if f.Anonymous && tag == "" {
			keys = append(keys, jsonKeys(f.Type)...)
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name != "" && name != "-" {
			keys = append(keys, name)
		}
	}
	return keys
}

// omitEmpty reports whether key is omitted from view's JSON when empty.
func omitEmpty(view any, key string) bool {
	if view == nil {
		return true // JSON lines as the log holds them: any key may be absent
	}
	var find func(reflect.Type) bool
	find = func(typ reflect.Type) bool {
		for i := range typ.NumField() {
			f := typ.Field(i)
			tag := f.Tag.Get("json")
			if f.Anonymous && tag == "" && find(f.Type) {
				return true
			}
			name, opts, _ := strings.Cut(tag, ",")
			if name == key && strings.Contains(opts, "omitempty") {
				return true
			}
		}
		return false
	}
	return find(reflect.TypeOf(view))
}
