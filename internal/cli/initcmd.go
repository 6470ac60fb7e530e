package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/fsafe"
	"github.com/taskie-dev/taskie/internal/install"
)

// gitignore keeps taskie's machine-local files out of version control.
const gitignore = "# written by taskie: machine-local files\nlogs/\nsessions/\ncoord/\nlocal/\nclaude-marketplace/\nplans/*/.lock\nplans/*/.review.lock\nplans/*/.*.tmp*\n"

// initOpts are the options of `taskie init`.
type initOpts struct {
	s      *Streams
	g      *globals
	asJSON bool
}

func newInitCmd(s *Streams, g *globals) *cobra.Command { return newInitCmdWith(s, g, runInit) }

func newInitCmdWith(s *Streams, g *globals, run func(*initOpts) error) *cobra.Command {
	o := &initOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "init",
		Short: "Create .taskie/ in the current directory",
		Long: `Create .taskie/ (plans/, logs/) and its .gitignore, which keeps taskie's
machine-local files (logs, session memory, locks, the default plan, a local
plugin copy) out of git. Existing files are left alone; an older .gitignore
gets the lines it lacks. taskie plan new runs it when needed.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error { return run(o) },
	}
	c.Flags().BoolVar(&o.asJSON, "json", false, "print what was created as JSON")
	return c
}

func runInit(o *initOpts) error {
	cwd, err := o.g.cwd()
	if err != nil {
		return err
	}
	created, err := initProject(cwd)
	if err != nil {
		return err
	}
	// In a git repository: the merge drivers of plan files (docs/fleet.md).
	registered, err := install.MergeDriver(cwd)
	if err != nil {
		return fmt.Errorf("registering the plan-file merge drivers: %w", err)
	}
	if o.asJSON {
		if created == nil {
			created = []string{}
		}
		out := map[string]any{"dir": filepath.Join(cwd, ".taskie"), "created": created}
		if len(registered) > 0 {
			out["registered"] = registered
		}
		return writeJSON(o.s.Out, out)
	}
	if len(created) == 0 {
		fmt.Fprintf(o.s.Err, "taskie: %s already set up\n", filepath.Join(cwd, ".taskie"))
	}
	for _, c := range created {
		fmt.Fprintf(o.s.Err, "created %s\n", c)
	}
	for _, c := range registered {
		fmt.Fprintf(o.s.Err, "%s %s: %s\n", c.Action, c.Path, c.What)
	}
	return nil
}

// gitignoreLimit bounds the .gitignore taskie reads to complete it.
const gitignoreLimit = 1 << 20

// initProject creates .taskie/{plans,logs} and its .gitignore; it returns
// what it created and leaves existing files alone, except that an older
// .gitignore of taskie's gets the patterns it lacks. Everything goes
// through the repository root, so a committed symbolic link never leads a
// write out of it.
func initProject(dir string) ([]string, error) {
	root, err := fsafe.Open(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var created []string
	for _, d := range []string{".taskie", ".taskie/plans", ".taskie/logs"} {
		fi, err := root.Stat(d)
		switch {
		case err == nil && fi.IsDir():
			continue
		case err == nil:
			return created, fmt.Errorf("%s: not a directory", root.Path(d))
		case !errors.Is(err, fs.ErrNotExist):
			return created, err
		}
		if err := root.Mkdir(d, 0o755); err != nil {
			return created, err
		}
		created = append(created, root.Path(d)+string(filepath.Separator))
	}
	return created, ensureIgnored(root, func(gi string) { created = append(created, gi) })
}

// ensureIgnored writes .taskie/.gitignore when it is missing (calling
// made with its path), and adds to it the patterns of the template that it
// lacks when taskie wrote it; a .gitignore of the user's own is left alone.
func ensureIgnored(root *fsafe.Root, made func(string)) error {
	const gi = ".taskie/.gitignore"
	data, err := root.ReadFileLimit(gi, gitignoreLimit)
	if errors.Is(err, fs.ErrNotExist) {
		if err := root.WriteFile(gi, []byte(gitignore), false); err != nil {
			return err
		}
		if made != nil {
			made(root.Path(gi))
		}
		return nil
	}
	if err != nil || !strings.HasPrefix(string(data), "# written by taskie") {
		return err
	}
	have := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	sc.Buffer(nil, gitignoreLimit+1)
	for sc.Scan() {
		have[strings.TrimSpace(sc.Text())] = true
	}
	var missing []string
	for _, line := range strings.Split(strings.TrimSpace(gitignore), "\n") {
		if !have[line] {
			missing = append(missing, line)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if !strings.HasSuffix(string(data), "\n") {
		data = append(data, '\n')
	}
	return root.WriteFile(gi, append(data, strings.Join(missing, "\n")+"\n"...), false)
}
