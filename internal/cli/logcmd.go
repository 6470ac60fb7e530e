package cli

import (
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/events"
)

// logOpts are the options of `taskie log`.
type logOpts struct {
	s      *Streams
	g      *globals
	asJSON bool
	last   int
}

func newLogCmd(s *Streams, g *globals) *cobra.Command { return newLogCmdWith(s, g, runLog) }

func newLogCmdWith(s *Streams, g *globals, run func(*logOpts) error) *cobra.Command {
	o := &logOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "log [-n N]",
		Short: "Show a plan's progress log: [ts] EVENT: message",
		Long: `Show the human-readable progress log of a plan, one line per event of its
events.jsonl: "[time] EVENT: message". -n shows the last N events only (read
from the end of the log); --json prints JSON lines {ts, event, task, message}.
Output streams: nothing is held whole. An unreadable line (a torn write) is
skipped with a warning.`,
		Example: "  taskie log\n  taskie log -n 20\n  taskie log --plan my-plan --json",
		Args:    maxArgs(0),
		RunE:    func(*cobra.Command, []string) error { return run(o) },
	}
	c.Flags().BoolVar(&o.asJSON, "json", false, "print JSON lines {ts, event, task, message}")
	c.Flags().IntVarP(&o.last, "last", "n", 0, "show only the last `N` events")
	return c
}

func runLog(o *logOpts) error {
	defer boundHeap()()
	p, err := o.g.openPlan("")
	if err != nil {
		return err
	}
	var w eventWriter = logLines{}
	if o.asJSON {
		w = logJSON{}
	}
	return streamEvents(o.s, p, events.Filter{}, o.last, w)
}

// logLines prints "[ts] EVENT: message".
type logLines struct{}

func (logLines) line(buf []byte, l *events.Lean) []byte {
	buf = append(buf, '[')
	buf = append(buf, leanTS(l.TS)...)
	buf = append(buf, "] "...)
	buf = append(buf, l.Event...)
	buf = append(buf, ": "...)
	buf = append(buf, leanEventMessage(l)...)
	return append(buf, '\n')
}

// logJSON prints {"ts","event","task","message"} per line.
type logJSON struct{}

func (logJSON) line(buf []byte, l *events.Lean) []byte {
	buf = append(buf, `{"ts":`...)
	buf = appendJSONString(buf, leanTS(l.TS))
	buf = append(buf, `,"event":`...)
	buf = appendJSONString(buf, l.Event)
	if l.Task != "" {
		buf = append(buf, `,"task":`...)
		buf = appendJSONString(buf, l.Task)
	}
	buf = append(buf, `,"message":`...)
	buf = appendJSONString(buf, leanEventMessage(l))
	return append(buf, "}\n"...)
}

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced.
func appendJSONString(buf []byte, s string) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				buf = append(buf, '\\', c)
			case c == '\n':
				buf = append(buf, '\\', 'n')
			case c == '\t':
				buf = append(buf, '\\', 't')
			case c == '\r':
				buf = append(buf, '\\', 'r')
			case c < 0x20:
				buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				buf = append(buf, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, `\ufffd`...)
		} else {
			buf = append(buf, s[i:i+size]...)
		}
		i += size
	}
	return append(buf, '"')
}
