package agentpkg

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// root is the repository root, seen from this package's directory.
var root = filepath.Join("..", "..")

// actions are the 17 agent actions of docs/cli.md and parallel-plan (docs/parallel.md): one
// plugin command, one action prompt and one Codex skill each.
var actions = []string{
	"new-plan", "create-tasks", "next-task", "next-task-tdd", "complete-task", "complete-task-tdd",
	"continue-task", "continue-plan", "code-review", "post-code-review", "plan-review",
	"post-plan-review", "tasks-review", "post-tasks-review", "all-code-review",
	"post-all-code-review", "add-task", "parallel-plan",
}

func repoPath(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }

func read(t *testing.T, rel string) string {
	t.Helper()
	data, err := os.ReadFile(repoPath(rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// mdNames lists the .md files of a directory, without the extension, sorted.
func mdNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(repoPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".md"); ok && !e.IsDir() {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// sameSet reports the names missing from got and the extra ones.
func sameSet(t *testing.T, what string, got, want []string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("%s: %s.md is missing", what, w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			t.Errorf("%s: %s.md is not one of the %d actions", what, g, len(want))
		}
	}
}

// ---------------------------------------------------------------- JSON files

func TestJSONFilesParse(t *testing.T) {
	seen := map[string]bool{}
	for _, dir := range []string{"plugin", ".claude-plugin", "codex"} {
		err := filepath.WalkDir(repoPath(dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			seen[rel] = true
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if err := decodeOne(data, new(any)); err != nil {
				t.Errorf("%s: %v", rel, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"plugin/.claude-plugin/plugin.json", "plugin/hooks/hooks.json",
		".claude-plugin/marketplace.json", "codex/hooks.json"} {
		if !seen[want] {
			t.Errorf("%s: not found", want)
		}
	}
}

// decodeOne decodes exactly one JSON value, with nothing after it.
func decodeOne(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("data after the JSON value (offset %d)", dec.InputOffset())
	}
	return nil
}

func TestMarketplaceNamesThePlugin(t *testing.T) {
	var m struct {
		Name    string
		Plugins []struct{ Name, Source string }
	}
	if err := decodeOne([]byte(read(t, ".claude-plugin/marketplace.json")), &m); err != nil {
		t.Fatal(err)
	}
	var p struct{ Name string }
	if err := decodeOne([]byte(read(t, "plugin/.claude-plugin/plugin.json")), &p); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, pl := range m.Plugins {
		if pl.Name != p.Name {
			continue
		}
		found = true
		if filepath.Clean(pl.Source) != "plugin" {
			t.Errorf("marketplace.json: plugin %q has source %q, want ./plugin", pl.Name, pl.Source)
		}
	}
	if !found {
		t.Errorf("marketplace.json does not list the plugin %q of plugin.json", p.Name)
	}
}

// ---------------------------------------------------------------- frontmatter

// frontmatterKeys are the keys Claude Code and Codex read from a command.
var frontmatterKeys = []string{"description", "argument-hint", "allowed-tools", "model", "disable-model-invocation"}

// parseFrontmatter splits "---\nkey: value\n…\n---\n" from the body. Values
// must be plain YAML scalars that any YAML parser reads the same way: an
// unquoted value must not look like YAML syntax (a leading "[", a ": ").
func parseFrontmatter(text string) (map[string]string, string, error) {
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return nil, text, errors.New("no frontmatter: the file must start with ---")
	}
	head, body, ok := strings.Cut(rest, "\n---\n")
	if !ok {
		return nil, text, errors.New("frontmatter is not closed by ---")
	}
	fm := map[string]string{}
	for i, line := range strings.Split(head, "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok || key == "" || strings.TrimSpace(key) != key {
			return nil, body, fmt.Errorf("frontmatter line %d: want \"key: value\", got %q", i+2, line)
		}
		if _, dup := fm[key]; dup {
			return nil, body, fmt.Errorf("frontmatter line %d: %s given twice", i+2, key)
		}
		v, err := yamlScalar(strings.TrimSpace(val))
		if err != nil {
			return nil, body, fmt.Errorf("frontmatter line %d (%s): %v", i+2, key, err)
		}
		fm[key] = v
	}
	return fm, body, nil
}

func yamlScalar(v string) (string, error) {
	if len(v) >= 1 && (v[0] == '"' || v[0] == '\'') {
		q := v[:1]
		inner, ok := strings.CutSuffix(v[1:], q)
		if !ok || strings.Contains(inner, q) || strings.Contains(inner, `\`) {
			return "", fmt.Errorf("badly quoted value %s", v)
		}
		return inner, nil
	}
	if v != "" && strings.ContainsRune("[]{}#&*!|>%@`,", rune(v[0])) {
		return "", fmt.Errorf("value %q starts with %q: quote it", v, v[0])
	}
	if strings.Contains(v, ": ") || strings.Contains(v, " #") || strings.HasSuffix(v, ":") {
		return "", fmt.Errorf("value %q contains \": \" or \" #\": quote it or reword", v)
	}
	return v, nil
}

func TestParseFrontmatterRejectsYAMLTraps(t *testing.T) {
	for _, bad := range []string{
		"---\ndescription: Fix it: now\n---\n",
		"---\nargument-hint: [task-id]\n---\n",
		"---\ndescription: \"open\n---\n",
		"no frontmatter\n",
		"---\ndescription: x\n",
	} {
		if _, _, err := parseFrontmatter(bad); err == nil {
			t.Errorf("parseFrontmatter(%q) accepted it", bad)
		}
	}
	fm, body, err := parseFrontmatter("---\ndescription: Do it\nargument-hint: \"[task-id]\"\n---\n\nbody\n")
	if err != nil || fm["description"] != "Do it" || fm["argument-hint"] != "[task-id]" || body != "\nbody\n" {
		t.Errorf("got %v, %q, %v", fm, body, err)
	}
}

// ---------------------------------------------------------------- commands

var pluginRootRef = regexp.MustCompile(`\$\{CLAUDE_PLUGIN_ROOT\}/([^\s` + "`" + `'")]*)`)

func TestPluginCommands(t *testing.T) {
	commands := mdNames(t, "plugin/commands")
	sameSet(t, "plugin/commands", commands, actions)
	referenced := map[string]bool{}
	for _, name := range commands {
		file := "plugin/commands/" + name + ".md"
		fm, body, err := parseFrontmatter(read(t, file))
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		if strings.TrimSpace(fm["description"]) == "" {
			t.Errorf("%s: no description in the frontmatter", file)
		}
		for k := range fm {
			if !slices.Contains(frontmatterKeys, k) {
				t.Errorf("%s: unknown frontmatter key %q (known: %s)", file, k, strings.Join(frontmatterKeys, ", "))
			}
		}
		if _, ok := fm["argument-hint"]; ok && !strings.Contains(body, "$ARGUMENTS") {
			t.Errorf("%s: has an argument-hint but does not pass $ARGUMENTS", file)
		}
		own := "${CLAUDE_PLUGIN_ROOT}/actions/" + name + ".md"
		if !strings.Contains(body, own) {
			t.Errorf("%s: does not name its action %s", file, own)
		}
		if !strings.Contains(body, "${CLAUDE_PLUGIN_ROOT}/ground-rules.md") {
			t.Errorf("%s: does not name the ground rules", file)
		}
		for _, m := range pluginRootRef.FindAllStringSubmatch(body, -1) {
			target := path.Join("plugin", m[1])
			if _, err := os.Stat(repoPath(target)); err != nil {
				t.Errorf("%s: names %s, which does not exist", file, m[0])
			}
			if a, ok := strings.CutPrefix(m[1], "actions/"); ok {
				referenced[strings.TrimSuffix(a, ".md")] = true
			}
		}
	}
	for _, a := range mdNames(t, "plugin/actions") {
		if !referenced[a] {
			t.Errorf("plugin/actions/%s.md is not referenced by any command", a)
		}
	}
	sameSet(t, "plugin/actions", mdNames(t, "plugin/actions"), actions)
}

// ---------------------------------------------------------------- hooks

type hooksFile struct {
	Hooks map[string][]struct {
		Matcher string `json:"matcher"`
		Hooks   []struct {
			Type    string `json:"type"`
			Command string `json:"command"`
			Timeout int    `json:"timeout"`
		} `json:"hooks"`
	} `json:"hooks"`
}

func loadHooks(t *testing.T, rel string) hooksFile {
	t.Helper()
	var h hooksFile
	if err := decodeOne([]byte(read(t, rel)), &h); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return h
}

// wantHook checks that event runs command as a command hook; timeout 0 = any.
func wantHook(t *testing.T, rel string, h hooksFile, event, command string, timeout int) {
	t.Helper()
	for _, group := range h.Hooks[event] {
		for _, hk := range group.Hooks {
			if hk.Command != command {
				continue
			}
			if hk.Type != "command" {
				t.Errorf("%s: %s hook %q has type %q, want command", rel, event, command, hk.Type)
			}
			if timeout != 0 && hk.Timeout != timeout {
				t.Errorf("%s: %s hook %q has timeout %d, want %d", rel, event, command, hk.Timeout, timeout)
			}
			return
		}
	}
	t.Errorf("%s: no %s hook runs %q", rel, event, command)
}

func TestClaudeHooks(t *testing.T) {
	const rel = "plugin/hooks/hooks.json"
	h := loadHooks(t, rel)
	wantHook(t, rel, h, "Stop", "taskie hook stop", 1800)
	wantHook(t, rel, h, "SessionStart", "taskie hook session-start", 0)
	wantHook(t, rel, h, "SubagentStop", "taskie hook subagent-stop", 0)
}

func TestCodexHooks(t *testing.T) {
	const rel = "codex/hooks.json"
	h := loadHooks(t, rel)
	wantHook(t, rel, h, "Stop", "taskie hook stop", 1800)
	wantHook(t, rel, h, "SessionStart", "taskie hook session-start", 0)
	// Codex refuses a hooks.json whose root has other keys.
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(read(t, rel)), &top); err != nil {
		t.Fatal(err)
	}
	for k := range top {
		if k != "hooks" && k != "description" {
			t.Errorf("%s: key %q at the root: Codex accepts only description and hooks", rel, k)
		}
	}
}

// ---------------------------------------------------------------- Codex skills

// codexSkill is what codex/generate.sh writes for an action; keep the two in step.
func codexSkill(t *testing.T, name string) string {
	t.Helper()
	fm, _, err := parseFrontmatter(read(t, "plugin/commands/"+name+".md"))
	if err != nil {
		t.Fatalf("plugin/commands/%s.md: %v", name, err)
	}
	hint := ""
	if h := fm["argument-hint"]; h != "" {
		hint = ": " + h
	}
	codex := func(s string) string { return strings.ReplaceAll(s, "/taskie:", "$taskie-") }
	var b strings.Builder
	fmt.Fprintf(&b, "---\nname: taskie-%s\ndescription: %s\n---\n\n", name, fm["description"])
	fmt.Fprintf(&b, "<!-- Generated by codex/generate.sh from plugin/actions/%s.md and plugin/ground-rules.md: edit those. -->\n\n", name)
	fmt.Fprintf(&b, "This is the taskie action `%s`, as a Codex skill. Its arguments are what the user wrote\n", name)
	fmt.Fprintf(&b, "after `$taskie-%s` in the message that invoked it%s.\n", name, hint)
	b.WriteString("A `$taskie-<action>` below names another taskie action: the Codex skill `taskie-<action>`,\n")
	b.WriteString("installed next to this one. When taskie's own output names an action as `/taskie:<action>`\n")
	b.WriteString("(the Claude Code spelling), it means that same skill: follow its SKILL.md. The ground rules\n")
	b.WriteString("follow the action.\n\n")
	b.WriteString(codex(read(t, "plugin/actions/"+name+".md")))
	b.WriteString("\n---\n\n")
	b.WriteString(codex(read(t, "plugin/ground-rules.md")))
	return b.String()
}

// firstDiff names the first line where two texts differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl || i >= len(g) || i >= len(w) {
			return fmt.Sprintf("line %d: got %q, want %q", i+1, gl, wl)
		}
	}
	return "no difference"
}

// skillDirs lists the skill directories under dir (relative to the root).
func skillDirs(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(repoPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		} else {
			t.Errorf("%s/%s: only skill directories belong here", dir, e.Name())
		}
	}
	return out
}

// skillName is Codex's rule for a skill name: at most 64 characters of
// lowercase letters, digits and hyphens (the directory's name).
var skillName = regexp.MustCompile(`^[a-z0-9-]{1,64}$`)

// slashAction is the Claude Code way to name an action, which a Codex
// user cannot type; skills say $taskie-<action> instead.
var slashAction = regexp.MustCompile(`/taskie:[a-z]`)

func TestCodexSkills(t *testing.T) {
	dirs := skillDirs(t, "codex/skills")
	var names []string
	for _, d := range dirs {
		names = append(names, strings.TrimPrefix(d, "taskie-"))
	}
	sort.Strings(names)
	sameSet(t, "codex/skills (taskie-<action>/)", names, actions)
	for _, dir := range dirs {
		file := "codex/skills/" + dir + "/SKILL.md"
		got := read(t, file)
		if want := codexSkill(t, strings.TrimPrefix(dir, "taskie-")); got != want {
			t.Errorf("%s is out of date with plugin/ (run sh codex/generate.sh): %s", file, firstDiff(got, want))
		}
		fm, _, err := parseFrontmatter(got)
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		if fm["name"] != dir || !skillName.MatchString(dir) {
			t.Errorf("%s: name %q, want the directory name %q (lowercase, digits, hyphens, at most 64)", file, fm["name"], dir)
		}
		if d := strings.TrimSpace(fm["description"]); d == "" || len(d) > 1024 {
			t.Errorf("%s: description must be 1 to 1024 characters, got %d", file, len(d))
		}
		for k := range fm {
			if k != "name" && k != "description" {
				t.Errorf("%s: frontmatter key %q: a Codex skill has name and description", file, k)
			}
		}
		for i, line := range strings.Split(got, "\n") {
			if slashAction.MatchString(line) {
				t.Errorf("%s:%d: %q names a Claude Code command; a Codex skill says $taskie-<action>", file, i+1, line)
			}
		}
	}
}

// TestGenerateScript runs codex/generate.sh into a temporary directory and
// checks that it writes what codexSkill says, so the two cannot drift apart.
func TestGenerateScript(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	out := t.TempDir()
	cmd := exec.Command(sh, repoPath("codex/generate.sh"), out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generate.sh: %v\n%s", err, b)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(actions) {
		t.Errorf("generate.sh wrote %d skills, want %d", len(entries), len(actions))
	}
	for _, e := range entries {
		name := strings.TrimPrefix(e.Name(), "taskie-")
		data, err := os.ReadFile(filepath.Join(out, e.Name(), "SKILL.md"))
		if err != nil {
			t.Fatal(err)
		}
		if want := codexSkill(t, name); string(data) != want {
			t.Errorf("generate.sh and codexSkill disagree on %s: %s", e.Name(), firstDiff(string(data), want))
		}
	}
}

// ---------------------------------------------------------------- taskie invocations

// invocation is one `taskie …` command line written in a file.
type invocation struct {
	File string
	Line int
	Text string
}

func (v invocation) String() string { return fmt.Sprintf("%s:%d: `%s`", v.File, v.Line, v.Text) }

var codeSpan = regexp.MustCompile("`([^`]+)`")

// extractInvocations finds the taskie commands of a markdown text: in inline
// code spans (which may wrap within a paragraph) and on the lines of fenced
// code blocks.
func extractInvocations(file, text string) []invocation {
	var out []invocation
	add := func(line int, chunk string) {
		for _, seg := range shellSegments(chunk) {
			if strings.HasPrefix(seg, "taskie ") {
				out = append(out, invocation{File: file, Line: line, Text: seg})
			}
		}
	}
	lines := strings.Split(text, "\n")
	var para []string // current paragraph outside fences
	paraStart := 0
	flush := func() {
		joined := strings.Join(para, "\n")
		for _, m := range codeSpan.FindAllStringSubmatchIndex(joined, -1) {
			line := paraStart + strings.Count(joined[:m[0]], "\n")
			add(line, strings.ReplaceAll(joined[m[2]:m[3]], "\n", " "))
		}
		para = nil
	}
	fence := ""
	for i, line := range lines {
		n := i + 1
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
				continue
			}
			cmd := trimmed
			if j := strings.Index(cmd, " #"); j >= 0 {
				cmd = cmd[:j]
			}
			add(n, strings.TrimPrefix(cmd, "$ "))
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			flush()
			fence = trimmed[:3]
			continue
		}
		if trimmed == "" {
			flush()
			continue
		}
		if para == nil {
			paraStart = n
		}
		para = append(para, line)
	}
	flush()
	return out
}

// shellSegments splits a command line at &&, ||, ; and |.
func shellSegments(s string) []string {
	for _, sep := range []string{"&&", "||", ";"} {
		s = strings.ReplaceAll(s, sep, "|")
	}
	var out []string
	for _, seg := range strings.Split(s, "|") {
		out = append(out, strings.TrimSpace(seg))
	}
	return out
}

// taskieCLI answers questions about the real command line from --help.
type taskieCLI struct {
	bin  string
	mu   sync.Mutex
	help map[string]*cmdHelp
}

type cmdHelp struct {
	subs     []string // subcommand names
	runnable bool     // takes arguments itself (not only a group of subcommands)
	text     string
	err      error
}

var (
	buildOnce sync.Once
	built     *taskieCLI
	buildErr  error
	buildDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// realCLI builds cmd/taskie once per test binary.
func realCLI(t *testing.T) *taskieCLI {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "agentpkg-")
		if buildErr != nil {
			return
		}
		bin := filepath.Join(buildDir, "taskie")
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/taskie")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/taskie: %v\n%s", err, out)
			return
		}
		built = &taskieCLI{bin: bin, help: map[string]*cmdHelp{}}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return built
}

var usageLine = regexp.MustCompile(`^\s+taskie(.*)$`)

func (c *taskieCLI) helpFor(path []string) *cmdHelp {
	key := strings.Join(path, " ")
	c.mu.Lock()
	defer c.mu.Unlock()
	if h, ok := c.help[key]; ok {
		return h
	}
	cmd := exec.Command(c.bin, append(slices.Clone(path), "--help")...)
	cmd.Dir = os.TempDir()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	h := &cmdHelp{text: out.String()}
	if err := cmd.Run(); err != nil {
		h.err = fmt.Errorf("taskie %s --help: %v: %s", key, err, errb.String())
	}
	h.text = out.String()
	section := ""
	for _, line := range strings.Split(h.text, "\n") {
		if line != "" && !strings.HasPrefix(line, " ") {
			section = line
			continue
		}
		switch section {
		case "Available Commands:":
			if f := strings.Fields(line); len(f) > 0 {
				h.subs = append(h.subs, f[0])
			}
		case "Usage:":
			if m := usageLine.FindStringSubmatch(line); m != nil {
				rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(m[1]), key))
				if rest != "[command]" {
					h.runnable = true
				}
			}
		}
	}
	c.help[key] = h
	return h
}

func (h *cmdHelp) hasFlag(flag string) bool {
	if flag == "-h" || flag == "--help" {
		return true
	}
	var re *regexp.Regexp
	if strings.HasPrefix(flag, "--") {
		re = regexp.MustCompile(`(?m)^\s+(?:-[A-Za-z0-9], )?` + regexp.QuoteMeta(flag) + `(?:[\s=]|$)`)
	} else {
		re = regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(flag) + `,`)
	}
	return re.MatchString(h.text)
}

func isFlag(tok string) bool {
	return len(tok) > 1 && tok[0] == '-' && tok != "--" && (tok[1] == '-' || isAlnum(tok[1]))
}

func isAlnum(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// plannedInREADME are commands of docs/cli.md that READMEs may describe before
// the binary has them; prompts and rules may never name them.
var plannedInREADME = []string{"install", "uninstall", "doctor"}

// check returns what is wrong with one invocation: an unknown command, an
// argument given to a group of subcommands, or a flag the command lacks.
// The command path ends at the first token that is not a subcommand; a
// placeholder such as <T> is an argument.
func (c *taskieCLI) check(v invocation) []string {
	var toks []string
	for _, f := range strings.Fields(strings.TrimPrefix(v.Text, "taskie ")) {
		if f = strings.Trim(f, "[]()"); f != "" {
			toks = append(toks, f)
		}
	}
	var path []string
	i := 0
	for ; i < len(toks) && !isFlag(toks[i]); i++ {
		h := c.helpFor(path)
		if !slices.Contains(h.subs, toks[i]) {
			break
		}
		path = append(path, toks[i])
	}
	h := c.helpFor(path)
	if h.err != nil {
		return []string{h.err.Error()}
	}
	if i < len(toks) && !isFlag(toks[i]) {
		if len(path) == 0 {
			if filepath.Base(v.File) == "README.md" && slices.Contains(plannedInREADME, toks[i]) {
				return nil // not built yet; checked once it is
			}
			return []string{fmt.Sprintf("%s: unknown command %q (taskie has: %s)", v, toks[i], strings.Join(h.subs, ", "))}
		}
		if !h.runnable {
			return []string{fmt.Sprintf("%s: %q is not a subcommand of `taskie %s` (it has: %s)", v, toks[i], strings.Join(path, " "), strings.Join(h.subs, ", "))}
		}
	}
	var problems []string
	for _, tok := range toks[i:] {
		if !isFlag(tok) {
			continue
		}
		flag, _, _ := strings.Cut(tok, "=")
		if !h.hasFlag(flag) {
			problems = append(problems, fmt.Sprintf("%s: `taskie %s` has no flag %s", v, strings.Join(path, " "), flag))
		}
	}
	return problems
}

// agentTexts are the files whose taskie invocations an agent or a user
// follows: every prompt, action, the ground rules and the READMEs.
func agentTexts(t *testing.T) []string {
	t.Helper()
	files := []string{"plugin/ground-rules.md", "plugin/README.md", "codex/README.md", "README.md"}
	for _, dir := range []string{"plugin/commands", "plugin/actions"} {
		for _, n := range mdNames(t, dir) {
			files = append(files, dir+"/"+n+".md")
		}
	}
	for _, d := range skillDirs(t, "codex/skills") {
		files = append(files, "codex/skills/"+d+"/SKILL.md")
	}
	return files
}

func TestTaskieInvocationsAreReal(t *testing.T) {
	cli := realCLI(t)
	var all []invocation
	for _, f := range agentTexts(t) {
		all = append(all, extractInvocations(f, read(t, f))...)
	}
	for _, rel := range []string{"plugin/hooks/hooks.json", "codex/hooks.json"} {
		for event, groups := range loadHooks(t, rel).Hooks {
			for _, g := range groups {
				for _, hk := range g.Hooks {
					all = append(all, invocation{File: rel + " (" + event + ")", Text: hk.Command})
				}
			}
		}
	}
	// The extraction itself must work, or everything would pass.
	if len(all) < 100 {
		t.Fatalf("found only %d taskie invocations; is the extraction broken?", len(all))
	}
	for _, want := range []invocation{
		{File: "plugin/actions/complete-task.md", Text: "taskie start <T> --auto"},
		{File: "plugin/actions/continue-plan.md", Text: "taskie continue"},
		{File: "plugin/actions/post-code-review.md", Text: "taskie done post-code-review"},
	} {
		if !slices.ContainsFunc(all, func(v invocation) bool { return v.File == want.File && v.Text == want.Text }) {
			t.Errorf("%s: `%s` was not found", want.File, want.Text)
		}
	}
	for _, v := range all {
		for _, p := range cli.check(v) {
			t.Error(p)
		}
	}
}

// TestInvocationCheckerCatchesMistakes shows that the check above can fail.
func TestInvocationCheckerCatchesMistakes(t *testing.T) {
	cli := realCLI(t)
	text := "Run `taskie teleport 3`, then `taskie start <T>\n--bogus` and `taskie status --json`.\n" +
		"\n```sh\ntaskie plan frob x\ntaskie status --json && taskie continue --plan p # fine\n" +
		"$ taskie done post-code-review --task 3 | cat\n```\n" +
		"Never `taskie install codex` outside a README.\n"
	got := extractInvocations("x.md", text)
	want := []invocation{
		{"x.md", 1, "taskie teleport 3"},
		{"x.md", 1, "taskie start <T> --bogus"},
		{"x.md", 2, "taskie status --json"},
		{"x.md", 5, "taskie plan frob x"},
		{"x.md", 6, "taskie status --json"},
		{"x.md", 6, "taskie continue --plan p"},
		{"x.md", 7, "taskie done post-code-review --task 3"},
		{"x.md", 9, "taskie install codex"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("extracted\n%v\nwant\n%v", got, want)
	}
	bad := map[string]string{
		"taskie teleport 3":        "unknown command",
		"taskie start <T> --bogus": "no flag --bogus",
		"taskie plan frob x":       "not a subcommand",
	}
	if !slices.Contains(cli.helpFor(nil).subs, "install") {
		bad["taskie install codex"] = "unknown command"
	}
	for _, v := range got {
		problems := cli.check(v)
		wantProblem, isBad := bad[v.Text]
		switch {
		case isBad && (len(problems) != 1 || !strings.Contains(problems[0], wantProblem) || !strings.Contains(problems[0], fmt.Sprintf("x.md:%d", v.Line))):
			t.Errorf("%v: problems %q, want one saying %q with file and line", v, problems, wantProblem)
		case !isBad && len(problems) > 0:
			t.Errorf("%v: unexpected problems %q", v, problems)
		}
	}
}
