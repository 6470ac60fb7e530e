package cli

import (
	"os"

	"golang.org/x/term"
)

// SystemStreams returns the process's streams: stdin, stdout and stderr,
// whether stdout and stderr are terminals, and whether colour is wanted on
// each. TASKIE_FORCE_TTY=1 makes taskie behave as on a terminal (bars,
// colour) even when its output is piped, as scripts and tests need;
// NO_COLOR (any non-empty value) and TERM=dumb switch colour off, keeping
// the bars.
func SystemStreams() Streams {
	force := os.Getenv("TASKIE_FORCE_TTY") != ""
	out := force || term.IsTerminal(int(os.Stdout.Fd()))
	errOut := force || term.IsTerminal(int(os.Stderr.Fd()))
	color := colorWanted(os.Getenv)
	return Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, TTY: out, Color: out && color, ErrColor: errOut && color}
}

// colorWanted reports whether the environment allows colour
// (https://no-color.org).
func colorWanted(getenv func(string) string) bool {
	return getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
}

// palette colours text for a terminal; its zero value prints plain text.
type palette struct{ on bool }

// out is the palette of stdout, errs the one of stderr.
func (s *Streams) out() palette  { return palette{on: s.Color} }
func (s *Streams) errs() palette { return palette{on: s.ErrColor} }

func (p palette) wrap(code, text string) string {
	if !p.on || text == "" {
		return text
	}
	return "\033[" + code + "m" + text + "\033[0m"
}

// Bold, Dim, Red, Green, Yellow and Cyan colour text on a terminal.
func (p palette) Bold(s string) string   { return p.wrap("1", s) }
func (p palette) Dim(s string) string    { return p.wrap("2", s) }
func (p palette) Red(s string) string    { return p.wrap("31", s) }
func (p palette) Green(s string) string  { return p.wrap("32", s) }
func (p palette) Yellow(s string) string { return p.wrap("33", s) }
func (p palette) Cyan(s string) string   { return p.wrap("36", s) }
