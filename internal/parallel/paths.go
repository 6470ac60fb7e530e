package parallel

import (
	"path"
	"strings"
	"sync"

	"github.com/taskie-dev/taskie/internal/plan"
)

// knownExts are the extensions that make a word a file name. The list is
// closed on purpose: "e.g.", "v1.2" and "plan.Tasks" must not become files.
// The sets are built at first use (wordSets): a process that reads no task
// file pays nothing for them at start, not even a sync.OnceValue.
var knownExts, knownNames, notFiles map[string]bool

var wordSetsOnce sync.Once

func wordSets() {
	wordSetsOnce.Do(func() {
		knownExts = setOf(
			"go", "mod", "sum", "md", "txt", "txtar", "json", "jsonl", "yaml", "yml",
			"toml", "ini", "cfg", "conf", "env", "sh", "bash", "zsh", "fish", "ps1",
			"py", "rb", "js", "mjs", "cjs", "ts", "tsx", "jsx", "rs", "c", "h", "cc",
			"cpp", "hpp", "java", "kt", "kts", "swift", "scala", "cs", "php", "pl",
			"lua", "sql", "proto", "graphql", "html", "htm", "css", "scss", "sass",
			"less", "vue", "svelte", "xml", "svg", "csv", "tsv", "lock", "tf", "hcl",
			"gradle", "mk", "tmpl", "tpl", "gotmpl", "golden", "rst", "adoc", "ipynb",
			"dart", "ex", "exs", "erl", "hs", "ml", "nix", "zig", "bzl", "cmake",
		)
		// knownNames are files without an extension that are still files.
		knownNames = setOf("Makefile", "Dockerfile", "Justfile", "Rakefile", "Gemfile", "LICENSE", "Containerfile")
		// notFiles are words with a known extension that name products, not files.
		notFiles = setOf("node.js", "vue.js", "next.js", "nuxt.js", "react.js", "express.js", "d3.js", "three.js", "chart.js")
	})
}

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// planFile reports whether p names taskie's own plan files — "plan.md",
// "task-3.md", "state.json", anything under .taskie/ — which task files
// cite as documents, not as work.
func planFile(p string) bool {
	if strings.HasPrefix(p, ".taskie/") {
		return true
	}
	return !strings.Contains(p, "/") &&
		(p == "state.json" || p == "events.jsonl" || plan.ParseFileName(p).Kind != plan.KindUnknown)
}

// FilesIn returns the repository paths a task file names, in order of
// first mention, normalised by NormPath. The rule is conservative — a
// false path only delays a task, but prose must not become files:
//
//   - in a backticked span with no spaces: a relative path with a slash
//     ("internal/x", "./cmd/..."; without an extension it is taken as a
//     directory), a glob with a slash ("internal/x/*.go", taken as its
//     directory), a name with a known extension ("README.md"), or a
//     well-known name ("Makefile");
//   - elsewhere, fenced code included: a word with a known extension
//     ("internal/x/y.go", "README.md"), after stripping punctuation,
//     markdown link syntax and a ":line" suffix.
//
// Never: URLs, absolute or home paths, paths with "..", flags, emails,
// module@version strings, and taskie's own plan files ("plan.md",
// "task-2.md", anything under .taskie/).
func FilesIn(data []byte) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if p != "" && !seen[p] && !planFile(p) {
			seen[p] = true
			out = append(out, p)
		}
	}
	fenced := false
	for rest := string(data); rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			continue
		}
		if fenced {
			scanWords(t, add)
			continue
		}
		scanLine(t, add)
	}
	return out
}

// scanLine splits a prose line into backticked spans and the text around
// them.
func scanLine(line string, add func(string)) {
	for {
		open := strings.IndexByte(line, '`')
		if open < 0 {
			break
		}
		end := strings.IndexByte(line[open+1:], '`')
		if end < 0 {
			break
		}
		scanWords(line[:open], add)
		add(codePath(line[open+1 : open+1+end]))
		line = line[open+1+end+1:]
	}
	scanWords(line, add)
}

// wordSep marks the bytes that separate words in prose. They are all
// ASCII, so a byte never splits a UTF-8 sequence.
var wordSep = func() (t [256]bool) {
	for _, c := range " \t()[]<>,;\"'|{}=" {
		t[c] = true
	}
	return t
}()

// scanWords adds every word of prose that is a file by the bare-word
// rule. It runs on every line of every task file, so it slices the line
// in place and drops a word without a dot (no extension) before any other
// work: most words of prose go no further.
func scanWords(s string, add func(string)) {
	for i := 0; i < len(s); {
		for i < len(s) && wordSep[s[i]] {
			i++
		}
		start := i
		for i < len(s) && !wordSep[s[i]] {
			i++
		}
		w := s[start:i]
		if strings.IndexByte(w, '.') < 0 {
			continue
		}
		w = strings.TrimRight(strings.TrimLeft(w, "*"), ".:!?*")
		if p, ok := cleanWord(w); ok && hasKnownExt(p) {
			add(NormPath(p))
		}
	}
}

// codePath applies the backtick rule to a span's text.
func codePath(s string) string {
	wordSets()
	if strings.ContainsAny(s, " \t") {
		return ""
	}
	p, ok := cleanWord(s)
	if !ok {
		return ""
	}
	if hasKnownExt(p) || knownNames[path.Base(p)] || strings.Contains(p, "*") {
		return NormPath(p)
	}
	rel := strings.TrimPrefix(p, "./")
	first, _, slash := strings.Cut(rel, "/")
	if !slash || first == "" || strings.Contains(first[1:], ".") {
		return "" // no slash, or a module path such as golang.org/x/tools
	}
	q := NormPath(p)
	if q != "" && !strings.HasSuffix(q, "/") {
		q += "/"
	}
	return q
}

// cleanWord strips a ":line", ":line:col" or "#Lline" suffix from a word
// and rejects what cannot be a relative repository path.
func cleanWord(w string) (string, bool) {
	wordSets()
	if i := strings.IndexByte(w, ':'); i > 0 && lineSuffix(w[i+1:]) {
		w = w[:i]
	}
	if i := strings.Index(w, "#L"); i > 0 {
		w = w[:i]
	}
	if w == "" || w[0] == '/' || w[0] == '~' || w[0] == '-' || w[0] == '$' ||
		strings.Contains(w, "://") || strings.ContainsAny(w, "@\\:%") || notFiles[strings.ToLower(w)] ||
		strings.Contains(w, "*") && !strings.Contains(w, "/") { // a root glob would cover everything
		return "", false
	}
	if w == ".." || strings.HasPrefix(w, "../") || strings.HasSuffix(w, "/..") || strings.Contains(w, "/../") {
		return "", false
	}
	return w, true
}

// lineSuffix reports whether s is "12" or "12:5".
func lineSuffix(s string) bool {
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && s[i] != ':' {
			return false
		}
	}
	return s != "" && s[0] != ':'
}

// hasKnownExt reports whether the last element of p ends in a known
// extension after a non-empty name.
func hasKnownExt(p string) bool {
	wordSets()
	base := path.Base(p)
	i := strings.LastIndexByte(base, '.')
	if i <= 0 || i == len(base)-1 {
		return false
	}
	return knownExts[strings.ToLower(base[i+1:])]
}

// NormPath puts a path in the form file sets are compared in: cleaned,
// without "./", a trailing "/" for a directory, and a glob or a Go "..."
// pattern replaced by its directory ("internal/x/*.go" → "internal/x/").
func NormPath(p string) string {
	p = strings.Trim(strings.TrimSpace(p), "`")
	if p == "" || p == "-" || strings.EqualFold(p, "none") {
		return ""
	}
	dir := strings.HasSuffix(p, "/")
	if i := strings.IndexAny(p, "*?["); i >= 0 {
		p, dir = p[:strings.LastIndexByte(p[:i], '/')+1], true
	}
	if strings.HasSuffix(p, "/...") || p == "..." {
		p, dir = strings.TrimSuffix(p, "..."), true
	}
	p = path.Clean(p)
	if p == "." || p == "/" {
		return "./" // the whole repository
	}
	p = strings.TrimPrefix(p, "./")
	if dir {
		p += "/"
	}
	return p
}
