package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/taskie-dev/taskie/internal/clock"
	"github.com/taskie-dev/taskie/internal/fsafe"
	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/plan"
)

// watchOpts are the options of `taskie watch`.
type watchOpts struct {
	s        *Streams
	g        *globals
	ctx      context.Context
	interval time.Duration
	once     bool
	limit    time.Duration // --for
}

// Terminal sequences of the full screen.
const (
	enterScreen = "\033[?1049h\033[?25l" // alternate screen, cursor hidden
	leaveScreen = "\033[?25h\033[?1049l" // cursor shown, main screen back
)

// filesPoll is how often the full screen looks for changed files: well
// under a second, and a stat per file only.
var filesPoll = 300 * time.Millisecond

func newWatchCmd(s *Streams, g *globals) *cobra.Command {
	o := &watchOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "watch [--interval D] [--once] [--for D]",
		Short: "A live view of every plan: what needs you, then each plan's tasks",
		Long: `Show every plan of the repository, live: first what needs you (the list of
` + "`taskie query --needs-you`" + `, docs/needs-you.md), then each plan with its tasks:
lifecycle state, wave, claim holder and lease, review round, open findings by
severity, what the reviews cost and the tokens they used when known.

On a terminal it takes the full screen and redraws within a second of any
change to the plans' files (or at once on a PostgreSQL store's notification);
q (or Ctrl-C) quits and gives the terminal back as it was. Piped, it prints a
full snapshot after a timestamp line whenever something changed, looking every
--interval. It only reads: no plan file is written.

--once prints one snapshot and exits; --for D stops after D.`,
		Example: "  taskie watch\n  taskie watch --interval 10s | tee watch.log\n  taskie watch --once",
		Args:    exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.ctx = cmd.Context()
			if o.interval <= 0 {
				return usageErr(fmt.Errorf("--interval %s: must be more than 0", o.interval), "for example --interval 2s")
			}
			if o.limit < 0 {
				return usageErr(fmt.Errorf("--for %s: must not be negative", o.limit), "for example --for 1m; without it, watch runs until interrupted")
			}
			return runWatch(o)
		},
	}
	f := c.Flags()
	f.DurationVar(&o.interval, "interval", 2*time.Second, "how often to look again without a change seen (piped: how often to look)")
	f.BoolVar(&o.once, "once", false, "print one snapshot and exit")
	f.DurationVar(&o.limit, "for", 0, "stop after this `duration` (default: until q or Ctrl-C)")
	return c
}

func runWatch(o *watchOpts) error {
	r, err := o.g.repo()
	if err != nil {
		return err
	}
	clk := o.g.clock()
	if o.once {
		b, err := watchSnapshot(r, clk)
		if err != nil {
			return err
		}
		_, err = o.s.Out.Write(b)
		return err
	}
	ctx := o.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.limit)
		defer cancel()
	}
	wakes := storeWakes(ctx, r, clk)
	if out, ok := o.s.Out.(*os.File); ok && term.IsTerminal(int(out.Fd())) {
		root, err := fsafe.Open(r.Root)
		if err != nil {
			return err
		}
		defer root.Close()
		wakes = append(wakes, filesWake(ctx, root, filesPoll))
		return watchScreen(ctx, o, out, r, clk, wakes)
	}
	var last []byte
	return watchLoop(ctx, o.interval, wakes, func() error {
		b, err := watchSnapshot(r, clk)
		if err != nil || bytes.Equal(b, last) {
			return err
		}
		last = b
		_, err = fmt.Fprintf(o.s.Out, "=== %s ===\n%s", clk.Now().Format("2006-01-02 15:04:05 MST"), b)
		return err
	})
}

// watchSnapshot is the screen as plain text.
func watchSnapshot(r *plan.Repo, clk clock.Clock) ([]byte, error) {
	v, err := gatherWatch(r, clk)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	renderWatch(&b, v)
	return b.Bytes(), nil
}

// storeWakes are the PostgreSQL store's notifications for each plan
// (none with the file store).
func storeWakes(ctx context.Context, r *plan.Repo, clk clock.Clock) []<-chan struct{} {
	ids, _ := r.Plans()
	var out []<-chan struct{}
	for _, id := range ids {
		p, err := implied.Get(r, id, clk)
		if err != nil {
			continue
		}
		if dbURL(p) == "" {
			return nil // one store for the repository: none to listen to
		}
		out = append(out, watchWake(ctx, p))
	}
	return out
}

// watchScreen is the full-screen view: the alternate screen with the
// cursor hidden, stdin in raw mode to read q; both are given back on
// every way out (q, Ctrl-C, SIGINT, SIGTERM, an error).
func watchScreen(ctx context.Context, o *watchOpts, out *os.File, r *plan.Repo, clk clock.Clock, wakes []<-chan struct{}) error {
	ctx, quit := context.WithCancel(ctx)
	defer quit()
	if _, err := io.WriteString(out, enterScreen); err != nil {
		return err
	}
	defer io.WriteString(out, leaveScreen)
	if in, ok := o.s.In.(*os.File); ok && term.IsTerminal(int(in.Fd())) {
		if old, err := term.MakeRaw(int(in.Fd())); err == nil {
			defer term.Restore(int(in.Fd()), old)
		}
		go readKeys(in, quit)
	}
	fd := int(out.Fd())
	var lastBody []byte
	var lastW, lastH int
	var updated time.Time
	return watchLoop(ctx, o.interval, wakes, func() error {
		w, h, err := term.GetSize(fd)
		if err != nil {
			w, h = 0, 0
		}
		body, err := watchSnapshot(r, clk)
		if err != nil {
			body = []byte("taskie: error: " + oneLine(err.Error()) + "\n")
		}
		if bytes.Equal(body, lastBody) && w == lastW && h == lastH {
			return nil
		}
		if !bytes.Equal(body, lastBody) {
			updated = clk.Now()
		}
		lastBody, lastW, lastH = body, w, h
		head := fmt.Sprintf("taskie watch · %s · updated %s · q quits", r.Root, updated.Format("15:04:05"))
		lines := []string{cutWidth(head, max(w, 0)), ""}
		if w <= 0 {
			lines[0] = head
		}
		lines = append(lines, fitScreen(body, w, max(h-len(lines), 1))...)
		_, err = io.WriteString(out, frame(lines))
		return err
	})
}

// frame draws lines from the top left, each clearing the rest of its
// line, then clears below: a redraw in place, without flicker. Raw mode
// turns off the terminal's newline translation, hence \r\n.
func frame(lines []string) string {
	var b strings.Builder
	b.WriteString("\033[H")
	for i, l := range lines {
		if i > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString(l)
		b.WriteString("\033[K")
	}
	b.WriteString("\033[J")
	return b.String()
}

// readKeys calls quit on q, Q, Ctrl-C or Ctrl-D (raw mode delivers them
// as bytes), or when the terminal cannot be read any more.
func readKeys(in io.Reader, quit func()) {
	buf := make([]byte, 64)
	for {
		n, err := in.Read(buf)
		for _, c := range buf[:n] {
			if c == 'q' || c == 'Q' || c == 3 || c == 4 {
				quit()
				return
			}
		}
		if err != nil {
			quit()
			return
		}
	}
}
