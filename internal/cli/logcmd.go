package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/history"
)

type logEntry struct {
	TS      string `json:"ts"`
	Event   string `json:"event"`
	Task    string `json:"task,omitempty"`
	Message string `json:"message"`
}

func newLogCmd(s *Streams, g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "log",
		Short: "Show a plan's progress log: [ts] EVENT: message",
		Long: `Show the human-readable progress log of a plan, one line per event of its
events.jsonl: "[time] EVENT: message". An unreadable line (a torn write) is
skipped with a warning.`,
		Example: "  taskie log\n  taskie log --plan my-plan --json",
		Args:    maxArgs(0),
		RunE: func(_ *cobra.Command, _ []string) error {
			p, err := g.openPlan("")
			if err != nil {
				return err
			}
			var w eventWriter = &logWriter{}
			if asJSON {
				w = &jsonArray{val: func(e events.Event) any {
					return logEntry{TS: history.TS(e), Event: e.Event, Task: e.Task, Message: history.Message(e)}
				}}
			}
			return streamEvents(s, p, 0, w)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of {ts, event, task, message}")
	return c
}

// logWriter prints one "[ts] EVENT: message" line per event.
type logWriter struct{ w io.Writer }

func (l *logWriter) start(out io.Writer) { l.w = out }
func (l *logWriter) end() error          { return nil }
func (l *logWriter) write(e events.Event) error {
	_, err := fmt.Fprintln(l.w, history.LogLine(e))
	return err
}
