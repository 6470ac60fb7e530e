package config

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// maxClaudeJSON bounds the read of Claude Code's own ~/.claude.json, which
// keeps per-project history and grows over time.
const maxClaudeJSON = 64 << 20

// Box says whether the reviewer may use Bash in a repository, and why.
type Box struct {
	Bash bool
	Why  string
}

// ReviewerBox decides whether the reviewer may run commands (Bash) in the
// repository at root: only when the user trusts it, through `taskie trust`
// (the repository's .taskie/config.json, or its absence, as it is now, and
// every program it pins unchanged) or through Claude Code's own recorded
// trust of the folder (~/.claude.json, projects[root].hasTrustDialogAccepted).
// Everything else gets the reviewer without Bash: it still reads the code
// and writes its review.
func ReviewerBox(root string) Box {
	abs, err := filepath.Abs(root)
	if err != nil {
		return Box{Why: fmt.Sprintf("%s: %v", root, err)}
	}
	st, err := CheckTrust(filepath.Join(abs, ".taskie"))
	switch {
	case err == nil && st.Trusted:
		return Box{Bash: true, Why: "you trusted this repository with `taskie trust`"}
	case err == nil && len(st.Changed) > 0:
		// A changed pinned program is a repository that changed under the
		// user: Claude Code's older trust of the folder does not cover it.
		return Box{Why: fmt.Sprintf("%s changed since `taskie trust`", andList(st.Changed))}
	}
	if ok, file := claudeTrusts(abs); ok {
		return Box{Bash: true, Why: "Claude Code records that you trusted this folder (" + file + ")"}
	}
	why := "neither `taskie trust` nor Claude Code's folder trust covers this repository"
	if err == nil && st.Recorded {
		why = ".taskie/config.json changed since `taskie trust`"
	}
	return Box{Why: why}
}

// claudeTrusts reports whether Claude Code's own config records that the
// user accepted its trust dialog for the folder dir (or the folder with its
// symlinks resolved), and names the file it read.
func claudeTrusts(dir string) (bool, string) {
	file := claudeJSON()
	if file == "" {
		return false, ""
	}
	// Stat first: a FIFO there would block the open.
	if st, err := os.Stat(file); err != nil || !st.Mode().IsRegular() || st.Size() > maxClaudeJSON {
		return false, file
	}
	f, err := os.Open(file)
	if err != nil {
		return false, file
	}
	defer f.Close()
	var doc struct {
		Projects map[string]struct {
			HasTrustDialogAccepted bool `json:"hasTrustDialogAccepted"`
		} `json:"projects"`
	}
	if json.NewDecoder(f).Decode(&doc) != nil {
		return false, file
	}
	dirs := []string{dir}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		dirs = append(dirs, real)
	}
	for _, d := range dirs {
		if doc.Projects[d].HasTrustDialogAccepted {
			return true, file
		}
	}
	return false, file
}

// claudeJSON is Claude Code's global config file: $CLAUDE_CONFIG_DIR/.claude.json
// when that is set, else ~/.claude.json.
func claudeJSON() string {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); filepath.IsAbs(d) {
		return filepath.Join(d, ".claude.json")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".claude.json")
}
