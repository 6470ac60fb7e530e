package cli

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// table is the one printer of the listing commands (docs/cli.md, "Piped
// output"). Piped, it prints a header of the command's --json keys, then
// one tab-separated line per row, values as --json gives them (times in
// RFC 3339); a script reads it with cut or awk. On a terminal it prints
// the columns aligned under a bold header in capitals, coloured by paint.
type table struct {
	// cols are the --json keys of a row, in order: the piped header.
	cols []string
	// heads name the columns on a terminal; nil: cols in capitals.
	heads []string
	// paint colours one cell on a terminal (after padding, so colour
	// never counts in a width); nil leaves cells plain.
	paint func(p palette, row, col int, cell string) string
}

// print writes n rows; cells(i, tty) gives row i's cells, machine values
// when tty is false. On a terminal the rows are asked for twice (widths,
// then lines) rather than held, so a long listing costs no memory; with
// no row, nothing is printed there. Piped, the header is always printed.
func (t table) print(s *Streams, n int, cells func(i int, tty bool) []string) error {
	if !s.TTY {
		return t.tsv(s.Out, n, func(i int) []string { return cells(i, false) })
	}
	if n == 0 {
		return nil
	}
	heads := t.heads
	if heads == nil {
		heads = make([]string, len(t.cols))
		for i, c := range t.cols {
			heads[i] = strings.ToUpper(strings.ReplaceAll(c, "_", " "))
		}
	}
	widths := make([]int, len(heads))
	measure := func(r []string) {
		for i, c := range r {
			if i < len(widths) {
				widths[i] = max(widths[i], utf8.RuneCountInString(c))
			}
		}
	}
	measure(heads)
	for i := range n {
		measure(cells(i, true))
	}
	pal := s.out()
	var b strings.Builder
	line := func(row int, r []string) error {
		b.Reset()
		for i, c := range r {
			pad := ""
			if i < len(r)-1 && i < len(widths) {
				pad = strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2)
			}
			switch {
			case row < 0:
				c = pal.Bold(c)
			case t.paint != nil:
				c = t.paint(pal, row, i, c)
			}
			b.WriteString(c + pad)
		}
		_, err := fmt.Fprintln(s.Out, strings.TrimRight(b.String(), " "))
		return err
	}
	if err := line(-1, heads); err != nil {
		return err
	}
	for i := range n {
		if err := line(i, cells(i, true)); err != nil {
			return err
		}
	}
	return nil
}

// tsv writes the header and the rows tab-separated.
func (t table) tsv(w io.Writer, n int, cells func(i int) []string) error {
	if _, err := io.WriteString(w, t.header()); err != nil {
		return err
	}
	var b strings.Builder
	for i := range n {
		b.Reset()
		for k, c := range cells(i) {
			if k > 0 {
				b.WriteByte('\t')
			}
			b.WriteString(tsvCell(c))
		}
		b.WriteByte('\n')
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
	}
	return nil
}

// header is the piped header line, newline included.
func (t table) header() string { return strings.Join(t.cols, "\t") + "\n" }

// tsvCell keeps a value on its line and in its column: tabs and line
// breaks become spaces.
func tsvCell(s string) string {
	if !strings.ContainsAny(s, "\t\n\r") {
		return s
	}
	return strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(s)
}

// rfc3339 renders a time for a table cell; the zero time is "-".
func rfc3339(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// listCell renders a list for a table cell: comma-separated, "-" when empty.
func listCell(xs []string) string {
	if len(xs) == 0 {
		return "-"
	}
	return strings.Join(xs, ",")
}
