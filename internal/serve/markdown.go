package serve

import (
	"html"
	"html/template"
	"regexp"
	"strings"
	"sync"
)

// Markdown renders a review file as HTML, safely: every character of the
// text is escaped first, and only a few constructs are turned into
// markup afterwards (headings, lists, fenced code, inline code, bold and
// italics, paragraphs). Raw HTML in the file stays text; links stay text.
func Markdown(src []byte) template.HTML {
	var b strings.Builder
	lines := strings.Split(strings.ReplaceAll(string(src), "\r\n", "\n"), "\n")
	var para []string
	list := "" // "ul", "ol" or ""
	flushPara := func() {
		if len(para) > 0 {
			b.WriteString("<p>" + inline(strings.Join(para, "\n")) + "</p>\n")
			para = nil
		}
	}
	closeList := func() {
		if list != "" {
			b.WriteString("</" + list + ">\n")
			list = ""
		}
	}
	openList := func(kind string) {
		if list != kind {
			closeList()
			b.WriteString("<" + kind + ">\n")
			list = kind
		}
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		if fence, ok := fenceOf(trimmed); ok {
			flushPara()
			closeList()
			var code []string
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), fence); i++ {
				code = append(code, lines[i])
			}
			b.WriteString("<pre><code>" + html.EscapeString(strings.Join(code, "\n")) + "</code></pre>\n")
			continue
		}
		if trimmed == "" {
			flushPara()
			closeList()
			continue
		}
		if m := res().heading.FindStringSubmatch(trimmed); m != nil {
			flushPara()
			closeList()
			n := string(rune('0' + min(len(m[1])+1, 6))) // h1 is the page's own title
			b.WriteString("<h" + n + ">" + inline(m[2]) + "</h" + n + ">\n")
			continue
		}
		if m := res().bullet.FindStringSubmatch(line); m != nil {
			flushPara()
			openList("ul")
			b.WriteString("<li>" + inline(m[1]) + "</li>\n")
			continue
		}
		if m := res().number.FindStringSubmatch(line); m != nil {
			flushPara()
			openList("ol")
			b.WriteString("<li>" + inline(m[1]) + "</li>\n")
			continue
		}
		if list != "" && (strings.HasPrefix(line, "  ") || strings.HasPrefix(line, "\t")) {
			// A continuation line of the last item: kept as its own item's
			// text would need a tree; a line break inside the list will do.
			b.WriteString("<li class=\"cont\">" + inline(trimmed) + "</li>\n")
			continue
		}
		closeList()
		para = append(para, trimmed)
	}
	flushPara()
	closeList()
	return template.HTML(b.String())
}

// res are the renderer's patterns, compiled on first use: the hooks link
// this package and must not pay for them at start.
var (
	resOnce sync.Once
	resVal  *mdREs
)

func res() *mdREs {
	resOnce.Do(func() { resVal = compileREs() })
	return resVal
}

func compileREs() *mdREs {
	return &mdREs{
		heading: regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*$`),
		bullet:  regexp.MustCompile(`^\s{0,3}[-*+]\s+(.*)$`),
		number:  regexp.MustCompile(`^\s{0,3}\d{1,9}[.)]\s+(.*)$`),
		code:    regexp.MustCompile("`([^`\n]+)`"),
		bold:    regexp.MustCompile(`\*\*([^*\n]+)\*\*|__([^_\n]+)__`),
		italic:  regexp.MustCompile(`(^|[^\w*])\*([^*\s][^*\n]*?)\*`),
	}
}

type mdREs struct{ heading, bullet, number, code, bold, italic *regexp.Regexp }

// fenceOf reports whether a line opens a fenced code block, and its fence.
func fenceOf(line string) (string, bool) {
	for _, f := range []string{"```", "~~~"} {
		if strings.HasPrefix(line, f) {
			return f, true
		}
	}
	return "", false
}

// inline escapes a line, then marks up code spans, bold and italics. Code
// spans are cut out first so that nothing inside them is marked up.
func inline(s string) string {
	var out strings.Builder
	last := 0
	for _, m := range res().code.FindAllStringSubmatchIndex(s, -1) {
		out.WriteString(emphasis(html.EscapeString(s[last:m[0]])))
		out.WriteString("<code>" + html.EscapeString(s[m[2]:m[3]]) + "</code>")
		last = m[1]
	}
	out.WriteString(emphasis(html.EscapeString(s[last:])))
	return strings.ReplaceAll(out.String(), "\n", "<br>\n")
}

// emphasis marks up already-escaped text (the markers are not escaped by
// html.EscapeString, so they survive; the text between them is escaped).
func emphasis(s string) string {
	s = res().bold.ReplaceAllStringFunc(s, func(m string) string {
		sub := res().bold.FindStringSubmatch(m)
		return "<strong>" + sub[1] + sub[2] + "</strong>"
	})
	return res().italic.ReplaceAllString(s, "$1<em>$2</em>")
}
