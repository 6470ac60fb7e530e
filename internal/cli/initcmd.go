package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// gitignore keeps taskie's machine-local files out of version control.
const gitignore = "# written by taskie: machine-local files\nlogs/\nsessions/\nplans/*/.lock\nplans/*/.review.lock\nplans/*/.*.tmp*\n"

func newInitCmd(s *Streams, g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "init",
		Short: "Create .taskie/ in the current directory",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			cwd, err := g.cwd()
			if err != nil {
				return err
			}
			created, err := initProject(cwd)
			if err != nil {
				return err
			}
			if len(created) == 0 {
				fmt.Fprintf(s.Err, "taskie: %s already set up\n", filepath.Join(cwd, ".taskie"))
			}
			for _, c := range created {
				fmt.Fprintf(s.Err, "created %s\n", c)
			}
			return nil
		},
	}
}

// initProject creates .taskie/{plans,logs} and its .gitignore; it returns
// what it created and leaves existing files alone.
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
	}
	return created, nil
}
