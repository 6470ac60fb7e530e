package cli

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// docs is the documentation embedded in the binary (docs/*.md).
var docs fs.FS = taskie.Docs

// topicAliases are the short names of help topics (an array, not a map:
// it costs nothing when the process starts).
var topicAliases = [...]struct{ alias, topic string }{
	{"config", "configuration"},
	{"settings", "configuration"},
	{"commands", "cli"},
	{"exit-codes", "cli"},
	{"phases", "state-machine"},
	{"hooks", "hook"},
	{"rules", "validation"},
}

// topic is one embedded document.
type topic struct {
	Name  string `json:"name"`
	Title string `json:"title"`
}

// helpTopics lists the embedded documents by name (the file's base name)
// with their first heading.
func helpTopics() []topic {
	names, _ := fs.Glob(docs, "docs/*.md")
	var out []topic
	for _, n := range names {
		data, err := fs.ReadFile(docs, n)
		if err != nil {
			continue
		}
		title, _, _ := strings.Cut(string(data), "\n")
		out = append(out, topic{Name: strings.TrimSuffix(path.Base(n), ".md"), Title: strings.TrimSpace(strings.TrimLeft(title, "# "))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// topicNames lists the topics and their aliases.
func topicNames() []string {
	out := topicList()
	for _, a := range topicAliases {
		out = append(out, a.alias)
	}
	sort.Strings(out)
	return out
}

// readTopic returns an embedded document by name or alias.
func readTopic(name string) (string, bool) {
	for _, a := range topicAliases {
		if a.alias == name {
			name = a.topic
		}
	}
	data, err := fs.ReadFile(docs, "docs/"+name+".md")
	if err != nil {
		return "", false
	}
	return renderDoc(string(data)), true
}

// Compiled at first use, not when every taskie process (the hook) starts.
var (
	mdLink      = &lazyRegexp{expr: `\[([^\]]+)\]\(([^)\s]+)\)`}
	htmlComment = &lazyRegexp{expr: `(?m)^<!--.*-->\n`}
)

// renderDoc makes a document read well without the repository: a link to
// another document becomes the `taskie help` command that prints it.
func renderDoc(text string) string {
	text = htmlComment.get().ReplaceAllString(text, "")
	return mdLink.get().ReplaceAllStringFunc(text, func(m string) string {
		sub := mdLink.get().FindStringSubmatch(m)
		label, target := sub[1], sub[2]
		file, _, _ := strings.Cut(target, "#")
		switch {
		case strings.HasPrefix(target, "http://"), strings.HasPrefix(target, "https://"):
			return label + " (" + target + ")"
		case strings.HasSuffix(file, ".md") && !strings.Contains(file, "/"):
			name := strings.TrimSuffix(file, ".md")
			if label == file || label == name {
				return "`taskie help " + name + "`"
			}
			return label + " (`taskie help " + name + "`)"
		}
		return label
	})
}

// helpLong is the help command's description, before the list of topics.
const helpLong = `Help about any command (taskie help status), or one of the documents built into
taskie (taskie help config).`

type helpOpts struct {
	s    *Streams
	root *cobra.Command
	args []string
}

// newHelpCmd replaces cobra's help command: `taskie help <command>` as
// before, and `taskie help <topic>` prints an embedded document.
func newHelpCmd(s *Streams, root *cobra.Command) *cobra.Command {
	o := &helpOpts{s: s, root: root}
	return &cobra.Command{
		Use:   "help [command | topic]",
		Short: "Help about a command, or a topic: config, validation, phases, hook, …",
		Long:  helpLong, // the topics are added when this help is shown (see finishTree)
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var out []cobra.Completion
			for _, t := range helpTopics() {
				out = append(out, cobra.CompletionWithDesc(t.Name, t.Title))
			}
			for _, c := range root.Commands() {
				if c.IsAvailableCommand() {
					out = append(out, cobra.CompletionWithDesc(c.Name(), c.Short))
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(_ *cobra.Command, args []string) error {
			o.args = args
			return runHelp(o)
		},
	}
}

func runHelp(o *helpOpts) error {
	if len(o.args) == 0 {
		o.root.SetOut(o.s.Out)
		return o.root.Help()
	}
	if len(o.args) == 1 {
		if text, ok := readTopic(o.args[0]); ok {
			fmt.Fprint(o.s.Out, text)
			return nil
		}
	}
	c, rest, err := o.root.Find(o.args)
	if err == nil && c != nil && len(rest) == 0 && (c != o.root || len(o.args) == 0) {
		c.SetOut(o.s.Out)
		return c.Help()
	}
	bad := o.args[len(o.args)-len(rest)]
	if len(rest) == 0 {
		bad = o.args[0]
	}
	candidates := topicNames()
	parent := o.root
	if c != nil {
		parent = c
	}
	for _, sub := range parent.Commands() {
		candidates = append(candidates, sub.Name())
	}
	hint := "`taskie help` lists the commands and the topics"
	if s := workflow.Nearest(bad, candidates); s != "" {
		hint = fmt.Sprintf("did you mean %q? (%s)", s, hint)
	}
	return usageErr(fmt.Errorf("no command or help topic %q", strings.Join(o.args, " ")), hint)
}

// finishTree applies what every command needs: an unknown subcommand is
// an error with a suggestion (never help and exit 0), the help command
// knows the topics, and, in the whole tree (the one a completion request
// runs), arguments complete with their values.
func finishTree(root *cobra.Command, s *Streams, g *globals, whole bool) {
	help := newHelpCmd(s, root)
	root.SetHelpCommand(help)
	// The topics are listed when a help text that names them is shown: a
	// command that only runs does not read the embedded documents.
	show, rootLong := root.HelpFunc(), root.Long
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		switch c {
		case root:
			c.Long = rootLong + "\n\nHelp topics (taskie help <topic>): " + strings.Join(topicList(), ", ") + "."
		case help:
			c.Long = helpLong + " Topics: " + strings.Join(topicNames(), ", ") + "."
		}
		show(c, args)
	})
	walk(root, func(c *cobra.Command) {
		if c != root && c.HasSubCommands() && !c.Runnable() {
			c.Args = cobra.ArbitraryArgs
			c.RunE = unknownSubcommand
			// Its usage stays that of a group: "taskie plan [command]".
			c.SetUsageTemplate(strings.Replace(c.UsageTemplate(), "{{if .Runnable}}", "{{if and .Runnable (not .HasAvailableSubCommands)}}", 1))
		}
	})
	addJQFlags(root, s)
	if whole {
		registerCompletions(root, g)
	}
}

// topicList names the topics, without aliases.
func topicList() []string {
	// The names alone: helpTopics reads every document for its title, which
	// every command paid at start for a line only root's help shows.
	names, _ := fs.Glob(docs, "docs/*.md")
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, strings.TrimSuffix(path.Base(n), ".md"))
	}
	sort.Strings(out)
	return out
}

// walk calls fn on c and every command below it.
func walk(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		walk(sub, fn)
	}
}

// commandsByUse lists the commands a user types most, most used first: of
// two names a typo is equally near, the one used more is suggested.
var commandsByUse = []string{
	"status", "continue", "claim", "ready", "done", "start", "review", "history",
	"log", "heartbeat", "release", "config", "plan", "validate", "doctor",
	"query", "findings", "finding", "context", "task", "use", "list", "new",
}

// unknownSubcommand is the run function of a command that only groups
// others: without arguments it prints its help; with one it does not know,
// it fails with the nearest command name.
func unknownSubcommand(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return c.Help()
	}
	var names []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	hint := fmt.Sprintf("%s commands: %s", c.CommandPath(), strings.Join(names, ", "))
	if len(names) > 8 {
		hint = fmt.Sprintf("`%s --help` lists the commands", c.CommandPath())
	}
	// Not cobra's SuggestionsFor: it offers the first name in alphabetical
	// order within two edits (`stauts` → start); this ranks by distance,
	// then by how often a command is used.
	if s := domain.NearestByUse(args[0], names, commandsByUse); s != "" {
		hint = fmt.Sprintf("did you mean `%s %s`?", c.CommandPath(), s)
	}
	return usageErr(fmt.Errorf("unknown command %q for %q", args[0], c.CommandPath()), hint)
}

var unknownCmdRE = &lazyRegexp{expr: `^unknown command "([^"]*)" for "taskie"`}

// explainError turns cobra's own error for an unknown command of the root
// (several lines, with "Did you mean this?") into taskie's: one error line
// and a hint. Other errors pass unchanged.
func explainError(root *cobra.Command, err error) error {
	m := unknownCmdRE.get().FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	return unknownSubcommand(root, []string{m[1]})
}

var flagNameRE = &lazyRegexp{expr: `--([A-Za-z0-9][A-Za-z0-9-]*)`}

// flagError is a usage error for a bad flag, with the nearest flag name
// when the flag is unknown.
func flagError(c *cobra.Command, err error) error {
	hint := fmt.Sprintf("see `%s --help`", c.CommandPath())
	if name, ok := strings.CutPrefix(err.Error(), "unknown flag: --"); ok {
		var names []string
		for _, m := range flagNameRE.get().FindAllStringSubmatch(c.Flags().FlagUsagesWrapped(0)+c.InheritedFlags().FlagUsagesWrapped(0), -1) {
			names = append(names, m[1])
		}
		if s := workflow.Nearest(name, names); s != "" {
			hint = fmt.Sprintf("did you mean --%s? (%s)", s, hint)
		}
	}
	return usageErr(err, hint)
}

// didYouMean appends "; did you mean X?" to a message when a candidate is
// near enough to be a likely typo.
func didYouMean(got string, candidates []string) string {
	if s := workflow.Nearest(got, candidates); s != "" {
		return fmt.Sprintf("; did you mean %q?", s)
	}
	return ""
}

// lazyRegexp is a regular expression compiled at first use. Unlike a
// sync.OnceValue, a package-level one allocates nothing when the process
// starts.
type lazyRegexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.expr) })
	return l.re
}
