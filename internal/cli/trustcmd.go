package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/config"
	"github.com/taskie-dev/taskie/internal/fsafe"
	"github.com/taskie-dev/taskie/internal/trust"
)

// trustOpts are the options of `taskie trust`.
type trustOpts struct {
	s                    *Streams
	g                    *globals
	revoke, list, asJSON bool
}

func newTrustCmd(s *Streams, g *globals) *cobra.Command { return newTrustCmdWith(s, g, runTrust) }

func newTrustCmdWith(s *Streams, g *globals, run func(*trustOpts) error) *cobra.Command {
	o := &trustOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "trust",
		Short: "Trust this repository: its config's programs, store and the reviewer's Bash",
		Long: `A repository's .taskie/config.json may name programs to run (reviewer_command,
a "cmd:…" entry in models), a store to send data to (store, project) and the
reviewer's tools (allowed_tools). taskie ignores those settings, and the hook
runs no review that would run such a program, until you have read the file and
trust it: taskie trust records the file's sha256 in
$XDG_STATE_HOME/taskie/trust.json, and the sha256 of every program file inside
the repository that the file names (./tools/review.sh). Any change to the file
or to a pinned program revokes the trust; --revoke revokes it now; --list shows
every trusted file. In a trusted repository the reviewer may also run commands
(Bash); a repository without a config file can be trusted too. The same
settings in your own config ($XDG_CONFIG_HOME/taskie/config.json) need no trust,
and your store, project and allowed_tools win over the repository's.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error { return run(o) },
	}
	c.Flags().BoolVar(&o.revoke, "revoke", false, "stop trusting the file")
	c.Flags().BoolVar(&o.list, "list", false, "list the trusted files")
	c.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")
	c.MarkFlagsMutuallyExclusive("revoke", "list")
	return c
}

func runTrust(o *trustOpts) error {
	s, g := o.s, o.g
	store, err := trust.Open()
	if err != nil {
		return usageErr(err, "")
	}
	if o.list {
		return listTrust(s, store, o.asJSON)
	}
	r, err := g.repo()
	if err != nil {
		return err
	}
	file := config.Path(r.TaskieDir())
	if o.revoke {
		return revokeTrust(s, store, file, o.asJSON)
	}
	data, err := readTrustable(file)
	if err != nil {
		return err
	}
	var progs []config.Program
	if data != nil {
		if progs, err = config.Programs(file, data); err != nil {
			return usageErr(err, "fix the file, then run `taskie trust` again")
		}
	}
	pins, err := config.Pins(file, progs)
	if err != nil {
		return usageErr(err, "a program taskie runs from the repository must be a regular file inside it")
	}
	e, err := store.TrustPinned(file, data, pins, o.s.Clock.Now())
	if err != nil {
		return err
	}
	if o.asJSON {
		if progs == nil {
			progs = []config.Program{}
		}
		err = writeJSON(s.Out, struct {
			trust.Entry
			Programs []config.Program `json:"programs"`
		}{e, progs})
	} else {
		printTrusted(s, e, progs)
	}
	if _, lerr := config.Load(r.TaskieDir()); lerr != nil {
		for _, line := range strings.Split(lerr.Error(), "\n") {
			fmt.Fprintf(s.Err, "taskie: warning: %s\n", line)
		}
	}
	return err
}

// trustableLimit bounds a trusted file as config loading bounds it.
const trustableLimit = 1 << 20

// readTrustable reads the repository's config file for trust, as config
// loading reads it: through a root on its directory, so a link out of the
// repository, a FIFO or an oversized file is refused and never trusted.
func readTrustable(file string) ([]byte, error) {
	data, err := readTrusted(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // trusts the repository as it is: creating the file revokes it
	}
	if err != nil {
		return nil, usageErr(err, "")
	}
	return data, nil
}

// readTrusted reads a trusted (or to be trusted) file without following a
// link out of its directory or waiting on a FIFO, at most trustableLimit.
func readTrusted(file string) ([]byte, error) {
	root, err := fsafe.Open(filepath.Dir(file))
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.ReadFileLimit(filepath.Base(file), trustableLimit)
}

func printTrusted(s *Streams, e trust.Entry, progs []config.Program) {
	fmt.Fprintf(s.Out, "trusted %s\n  sha256 %s\n", e.File, e.SHA256)
	if e.SHA256 == trust.Hash(nil) {
		fmt.Fprintf(s.Out, "  (there is no such file: the repository is trusted as it is)\n")
	}
	if len(progs) == 0 {
		fmt.Fprintf(s.Out, "  it sets nothing that runs a program\n")
	}
	for _, p := range progs {
		argv, _ := json.Marshal(p.Command)
		if p.Command == nil {
			argv = []byte("(unreadable value)")
		}
		fmt.Fprintf(s.Out, "  %s runs %s\n", p.Setting, argv)
	}
	for _, rel := range sortedPins(e.Pins) {
		fmt.Fprintf(s.Out, "  pinned %s %s\n", rel, e.Pins[rel])
	}
	fmt.Fprintf(s.Err, "any change to the file revokes this trust, and so does a change to a pinned program; `taskie trust --revoke` revokes it now\nthe reviewer may run commands (Bash) in this repository while it is trusted\n")
}

func sortedPins(pins map[string]string) []string {
	out := make([]string, 0, len(pins))
	for rel := range pins {
		out = append(out, rel)
	}
	sort.Strings(out)
	return out
}

func revokeTrust(s *Streams, store *trust.Store, file string, asJSON bool) error {
	found, err := store.Revoke(file)
	if err != nil {
		return err
	}
	key, _ := trust.Key(file)
	if asJSON {
		return writeJSON(s.Out, map[string]any{"file": key, "revoked": found})
	}
	if found {
		fmt.Fprintf(s.Out, "revoked %s\n", key)
	} else {
		fmt.Fprintf(s.Err, "%s was not trusted: nothing to revoke\n", key)
	}
	return nil
}

// trustListed is one line of `taskie trust --list`.
type trustListed struct {
	trust.Entry
	Status string `json:"status"` // trusted, changed, missing or unreadable
}

func listTrust(s *Streams, store *trust.Store, asJSON bool) error {
	entries, err := store.List()
	if err != nil {
		return err
	}
	rows := make([]trustListed, 0, len(entries))
	for _, e := range entries {
		status := "trusted"
		data, err := readTrusted(e.File)
		switch {
		case errors.Is(err, fs.ErrNotExist) && e.SHA256 == trust.Hash(nil):
			// trusted without a config file, and still without one
		case errors.Is(err, fs.ErrNotExist):
			status = "missing"
		case err != nil:
			status = "unreadable"
		case trust.Hash(data) != e.SHA256:
			status = "changed"
		}
		rows = append(rows, trustListed{e, status})
	}
	if asJSON {
		return writeJSON(s.Out, rows)
	}
	if len(rows) == 0 {
		fmt.Fprintf(s.Err, "no trusted files (%s)\n", store.Path())
	}
	t := table{cols: []string{"file", "sha256", "trusted_at", "pins", "status"},
		heads: []string{"STATUS", "TRUSTED AT", "FILE", "PINS"},
		paint: func(p palette, _, col int, cell string) string {
			if col == 0 && cell != "trusted" {
				return p.Red(cell)
			}
			return cell
		}}
	return t.print(s, len(rows), func(i int, tty bool) []string {
		r := rows[i]
		pins := sortedPins(r.Pins)
		if tty {
			return []string{r.Status, rfc3339(r.Trusted), r.File, strconv.Itoa(len(pins))}
		}
		for k, rel := range pins {
			pins[k] = rel + "=" + r.Pins[rel]
		}
		return []string{r.File, r.SHA256, rfc3339(r.Trusted), listCell(pins), r.Status}
	})
}
