package cli

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
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
	if o.asJSON {
		if created == nil {
			created = []string{}
		}
		return writeJSON(o.s.Out, map[string]any{"dir": filepath.Join(cwd, ".taskie"), "created": created})
	}
	if len(created) == 0 {
		fmt.Fprintf(o.s.Err, "taskie: %s already set up\n", filepath.Join(cwd, ".taskie"))
	}
	for _, c := range created {
		fmt.Fprintf(o.s.Err, "created %s\n", c)
	}
	return nil
}

// initProject creates .taskie/{plans,logs} and its .gitignore; it returns
// what it created and leaves existing files alone, except that an older
// .gitignore of taskie's gets the patterns it lacks.
func initProject(root string) ([]string, error) {
	var created []string
	td := filepath.Join(root, ".taskie")
	for _, d := range []string{td, filepath.Join(td, "plans"), filepath.Join(td, "logs")} {
		if _, err := os.Stat(d); err == nil {
			continue
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return created, err
		}
		created = append(created, d+string(filepath.Separator))
	}
	gi := filepath.Join(td, ".gitignore")
	if _, err := os.Stat(gi); os.IsNotExist(err) {
		if err := os.WriteFile(gi, []byte(gitignore), 0o644); err != nil {
			return created, err
		}
		created = append(created, gi)
		return created, nil
	}
	return created, ensureIgnored(td)
}

// ensureIgnored adds to .taskie/.gitignore the patterns of the template
// that it lacks, when taskie wrote the file; a .gitignore of the user's
// own is left alone.
func ensureIgnored(taskieDir string) error {
	gi := filepath.Join(taskieDir, ".gitignore")
	data, err := os.ReadFile(gi)
	if os.IsNotExist(err) {
		return os.WriteFile(gi, []byte(gitignore), 0o644)
	}
	if err != nil || !strings.HasPrefix(string(data), "# written by taskie") {
		return err
	}
	have := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
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
	return writeAtomic(gi, append(data, strings.Join(missing, "\n")+"\n"...))
}
