package config

import (
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/taskie-dev/taskie/internal/fsafe"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/trust"
)

// UserPath returns the user's own config file:
// $XDG_CONFIG_HOME/taskie/config.json when XDG_CONFIG_HOME is an absolute
// path, else ~/.config/taskie/config.json; "" when there is no home.
func UserPath() string {
	if d := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "taskie", FileName)
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".config", "taskie", FileName)
}

// Load returns the effective settings for the project whose .taskie
// directory is taskieDir: the defaults, then the user's file (UserPath),
// then taskieDir/config.json. Missing files are fine.
//
// The repository's settings that run a program (Programs) are taken only
// when the user trusts that exact file and the program files it pins
// (package trust); otherwise they are left out and named in Untrusted. Its
// store, project and allowed_tools need the same trust (else Ignored), and
// the user's own store, project and allowed_tools win
// over the repository's. An unreadable trust store trusts nothing and is
// returned as the error. A bad file is an *Error listing
// every problem of both files; malformed JSON is a *state.SyntaxError. With
// an error, the Config returned holds the defaults and every value that was
// valid, and never an untrusted one, so that a caller that must go on (the
// hook) has usable values.
func Load(taskieDir string) (Config, error) {
	return load(UserPath(), Path(taskieDir), trustedByUser)
}

// trustedFunc reports what the user's trust store says of file with
// content data.
type trustedFunc func(file string, data []byte) (TrustState, error)

// dataSettings say where data goes (store, project) or what the reviewer
// may do (allowed_tools): a repository's value needs trust like a program.
var dataSettings = []string{"allowed_tools", "project", "store"}

// userWins are the settings where the user's own file wins over the
// repository's, trusted or not: the user named where their data go and what
// their reviewer may do.
var userWins = map[string]bool{"allowed_tools": true, "project": true, "store": true}

func load(userFile, repoFile string, trusted trustedFunc) (Config, error) {
	c := Default()
	c.Source = map[string]string{}
	for _, k := range Keys() {
		c.Source[k] = "default"
	}
	var problems []Problem
	if userFile != "" {
		raw, _, err := readObject(userFile)
		if err != nil {
			return c, err
		}
		problems = append(problems, c.apply(userFile, raw, nil)...)
	}
	raw, data, err := readObject(repoFile)
	if err != nil {
		return c, err
	}
	skip := map[string]bool{}
	for k := range raw {
		if userWins[k] && userFile != "" && c.Source[k] == userFile {
			skip[k] = true
		}
	}
	var progs, datas []string
	for _, k := range programKeys(raw) {
		if !skip[k] {
			progs = append(progs, k)
		}
	}
	for _, k := range dataSettings {
		if _, ok := raw[k]; ok && !skip[k] {
			datas = append(datas, k)
		}
	}
	var trustErr error // an unreadable trust store trusts nothing
	if len(progs)+len(datas) > 0 {
		var st TrustState
		st, trustErr = trusted(repoFile, data)
		if !st.Trusted {
			for _, k := range append(slices.Clone(progs), datas...) {
				skip[k] = true
			}
			c.Untrusted, c.Ignored, c.Changed = progs, datas, st.Changed
			c.UntrustedFile, _ = trust.Key(repoFile)
		}
	}
	problems = append(problems, c.apply(repoFile, raw, skip)...)
	if trustErr != nil {
		return c, trustErr
	}
	if len(problems) > 0 {
		return c, &Error{Problems: problems}
	}
	return c, nil
}

// readObject reads a config file as one JSON object. A missing file is a
// nil object and no error; anything but a regular file is an error (a FIFO
// would hang the hook).
func readObject(path string) (map[string]json.RawMessage, []byte, error) {
	// Opened through a root on its directory: never through a symlink
	// leading elsewhere, never blocking on a FIFO, at most 1 MiB.
	root, err := fsafe.Open(filepath.Dir(path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	data, err := root.ReadFileLimit(filepath.Base(path), 1<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	raw, err := state.DecodeObject(path, data)
	if err != nil {
		return nil, nil, err
	}
	return raw, data, nil
}

// apply lays file's settings over c, one key at a time so that a problem
// names its setting and a bad value keeps the value underneath. Keys in
// skip are checked but not applied. It returns every problem found.
func (c *Config) apply(file string, raw map[string]json.RawMessage, skip map[string]bool) []Problem {
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var problems []Problem
	for _, k := range keys {
		if !known(k) {
			problems = append(problems, Problem{File: file, Setting: k, Msg: unknownKey(k)})
			continue
		}
		next, msgs := c.with(k, raw[k])
		for _, m := range msgs {
			problems = append(problems, Problem{File: file, Setting: k, Msg: m})
		}
		if len(msgs) > 0 || skip[k] {
			continue
		}
		source := c.Source
		*c = next
		c.Source = source
		c.Source[k] = file
	}
	return problems
}

// with returns c with key k set to the JSON value v, and what is wrong with
// the value. c itself is not changed.
func (c Config) with(k string, v json.RawMessage) (Config, []string) {
	// Unmarshal writes into the slices' arrays and merges a JSON object
	// into the map: give next its own.
	next := c
	next.ReviewerCommand = slices.Clone(c.ReviewerCommand)
	next.Models = slices.Clone(c.Models)
	next.AllowedTools = slices.Clone(c.AllowedTools)
	next.LifecycleTimeouts = maps.Clone(c.LifecycleTimeouts)
	one, _ := json.Marshal(map[string]json.RawMessage{k: v})
	if err := json.Unmarshal(one, &next); err != nil {
		return c, []string{typeProblem(k, v, err)}
	}
	return next, check(k, &next)
}
