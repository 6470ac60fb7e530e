package install

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
)

// The project's marketplace is a copy of the plugin that taskie install
// writes from the binary: machine-local, like taskie's logs. The project's
// .claude/settings.json, which names it by a relative path, is what a team
// commits; .taskie/.gitignore keeps the copy out of git.
const (
	ignoreLine = "claude-marketplace/"
	// ignoreOwn is the .gitignore install writes when the project has none.
	ignoreOwn = "# written by taskie install: the local copy of the Claude Code plugin\n" + ignoreLine + "\n"
)

func (t Target) gitignore() string { return filepath.Join(t.Root, ".taskie", ".gitignore") }

// ignoreMarketplace makes .taskie/.gitignore cover the marketplace: a new
// file when there is none, a line added to taskie's own file, and a user's
// own .gitignore left alone when it covers it already.
func ignoreMarketplace(t Target) (Change, error) {
	gi := t.gitignore()
	data, err := readFile(t.Root, gi)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Change{Path: gi, Action: "created", What: "keeps the plugin copy out of git"}, writeFileIn(t.Root, gi, []byte(ignoreOwn), filePerm)
	case err != nil:
		return Change{}, err
	case hasLine(string(data), ignoreLine):
		return Change{Path: gi, Action: "unchanged"}, nil
	}
	text := string(data)
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return Change{Path: gi, Action: "updated", What: "keeps the plugin copy out of git"}, writeFileIn(t.Root, gi, []byte(text+ignoreLine+"\n"), filePerm)
}

// unignoreMarketplace undoes ignoreMarketplace: the .gitignore install
// wrote is removed; in any other file of taskie's, the line stays (taskie
// init writes it too).
func unignoreMarketplace(t Target) (Change, error) {
	gi := t.gitignore()
	data, err := readFile(t.Root, gi)
	if err != nil || string(data) != ignoreOwn {
		return Change{Path: gi, Action: "unchanged"}, nil
	}
	if err := removeFile(t.Root, gi); err != nil {
		return Change{}, err
	}
	return Change{Path: gi, Action: "removed"}, nil
}

func hasLine(text, line string) bool {
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == line || strings.TrimSpace(l) == strings.TrimSuffix(line, "/") {
			return true
		}
	}
	return false
}
