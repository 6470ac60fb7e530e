package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/store"
)

// historyOpts are the options of `taskie history`.
type historyOpts struct {
	s      *Streams
	g      *globals
	task   string
	asJSON bool
	last   int
}

func newHistoryCmd(s *Streams, g *globals) *cobra.Command { return newHistoryCmdWith(s, g, runHistory) }

func newHistoryCmdWith(s *Streams, g *globals, run func(*historyOpts) error) *cobra.Command {
	o := &historyOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "history [task]",
		Short: "List a plan's events in order, or those of one task",
		Long: `List the events of a plan's events.jsonl in order, one per line:
time (RFC 3339), event, task, who acted, from → to (when it changed), and
the reason and details. Piped: a header of the --json keys shown (ts, plan,
task, event, from, to, actor, reason, meta) then tab-separated columns, meta
as JSON; on a terminal, columns of fixed width (a longer value pushes the
rest of its line). --json prints the events as JSON lines,
one object per line exactly as the log holds it. -n shows the last N events
only (read from the end of the log). Output streams: nothing is held whole.
An unreadable line (a torn write) is skipped with a warning.`,
		Example: "  taskie history\n  taskie history 3 --json\n  taskie history -n 20",
		Args:    maxArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			o.task = firstArg(args)
			return run(o)
		},
	}
	c.Flags().BoolVar(&o.asJSON, "json", false, "print the events as JSON lines, as the log holds them")
	c.Flags().IntVarP(&o.last, "last", "n", 0, "show only the last `N` events")
	return c
}

func runHistory(o *historyOpts) error {
	defer boundHeap()()
	p, err := o.g.openPlan("")
	if err != nil {
		return err
	}
	f := events.Filter{}
	if o.task != "" {
		task, err := taskArg(p, o.task)
		if err != nil {
			return usageErr(err, "")
		}
		f.Task = task.String()
	}
	var w eventWriter
	switch {
	case o.asJSON:
		w = rawLines{}
	case o.s.TTY:
		w = alignedRows{}
	default:
		w = tsvRows{}
	}
	return streamEvents(o.s, p, f, o.last, w)
}

// eventWriter appends one event's output to a line buffer.
type eventWriter interface {
	line(buf []byte, l *events.Lean) []byte
}

// streamEvents reads the plan's events that pass f (the last n when
// n > 0) and writes each as it is read; torn lines are warnings.
func streamEvents(s *Streams, p *store.Plan, f events.Filter, n int, w eventWriter) error {
	if n < 0 {
		return usageErr(fmt.Errorf("-n %d: the number of events must be positive", n), "")
	}
	out := bufio.NewWriterSize(s.Out, 64<<10)
	if h, ok := w.(interface{ header(palette) string }); ok {
		out.WriteString(h.header(s.out()))
	}
	var buf []byte
	emit := func(l *events.Lean) error {
		buf = w.line(buf[:0], l)
		_, err := out.Write(buf)
		return err
	}
	warn := func(msg string) { fmt.Fprintf(s.Err, "taskie: warning: %s\n", msg) }
	shared, err := scanLog(p, f, n, emit, warn) // the database's log when the store is one
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err == nil && !shared && !logExists(p) {
		fmt.Fprintf(s.Err, "plan %s has no %s yet\n", p.ID, events.FileName)
	}
	return err
}

// taskArg checks a user's task id against tasks.md for a read command. A
// table whose first column is Id is looked up line by line, without
// loading the plan's snapshot (a long plan's tasks.md costs more memory
// parsed than the whole scan of its log); any other case, and an unknown
// task, goes through the snapshot, whose error names the known ids.
func taskArg(p *store.Plan, arg string) (domain.TaskID, error) {
	if id, err := domain.ParseTaskID(arg); err == nil && id > 0 {
		if data, err := p.Store.Root().ReadFile(store.Rel(p.ID, "tasks.md")); err == nil && hasTaskRow(data, id.String()) {
			return id, nil
		}
	}
	return p.TaskID(arg)
}

// hasTaskRow reports whether a markdown table whose header's first cell is
// Id has a row whose first cell is id.
func hasTaskRow(data []byte, id string) bool {
	header := true
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] != '|' {
			continue
		}
		cell, _, _ := bytes.Cut(line[1:], []byte{'|'})
		cell = bytes.TrimSpace(cell)
		if header {
			if !strings.EqualFold(string(cell), "id") {
				return false
			}
			header = false
			continue
		}
		if string(cell) == id {
			return true
		}
	}
	return false
}

// logExists reports whether the plan has an event log, without loading
// the plan's snapshot (tasks.md may be long).
func logExists(p *store.Plan) bool {
	st, err := p.Store.Root().Stat(store.Rel(p.ID, events.FileName))
	return err == nil && st.Mode().IsRegular()
}

// scanPlanTail streams the last n events of the plan that pass f.
func scanPlanTail(p *store.Plan, f events.Filter, n int, fn func(*events.Lean) error, warn func(string)) error {
	rel := store.Rel(p.ID, events.FileName)
	r, err := p.Store.Root().OpenRead(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer r.Close()
	st, err := r.Stat()
	if err != nil {
		return err
	}
	return events.ScanLeanTail(r, st.Size(), p.Store.Root().Path(rel), n, f, fn, warn)
}

// rawLines prints each event as the log holds it: JSON lines.
type rawLines struct{}

func (rawLines) line(buf []byte, l *events.Lean) []byte { return append(append(buf, l.Raw...), '\n') }

// tsvRows prints history rows tab-separated (for pipes).
type tsvRows struct{}

// historyTable is history's piped header: the keys of an event in
// --json that it shows (the commit's own record, set, sha and the like, is
// left to --json).
var historyTable = table{cols: historyColumns}

func (tsvRows) header(palette) string { return historyTable.header() }

func (tsvRows) line(buf []byte, l *events.Lean) []byte {
	for i, c := range leanHistoryRow(l).TSV() {
		if i > 0 {
			buf = append(buf, '\t')
		}
		buf = append(buf, tsvCell(c)...)
	}
	return append(buf, '\n')
}

// alignedRows prints history rows in columns of fixed width (for a
// terminal): computed per line, so nothing is buffered to align.
type alignedRows struct{}

// historyWidths are the widths of the columns before the summary: time,
// event (the longest kind), task, actor, change.
var historyWidths = [...]int{20, 17, 4, 10, 32}

func (alignedRows) header(p palette) string {
	return p.Bold(strings.TrimRight(string(alignedRows{}.cells(nil, []string{"TIME", "EVENT", "TASK", "ACTOR", "CHANGE", "DETAILS"})), " ")) + "\n"
}

func (alignedRows) line(buf []byte, l *events.Lean) []byte {
	return append(alignedRows{}.cells(buf, leanHistoryRow(l).Cells()), '\n')
}

func (alignedRows) cells(buf []byte, cells []string) []byte {
	for i, c := range cells {
		buf = append(buf, c...)
		if i < len(historyWidths) {
			pad := historyWidths[i] - utf8.RuneCountInString(c)
			for j := 0; j < max(pad, 0)+2; j++ {
				buf = append(buf, ' ')
			}
		}
	}
	return buf
}
