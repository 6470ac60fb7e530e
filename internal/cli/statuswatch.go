package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/taskie-dev/taskie/internal/project"
)

// watchPoll is how often `taskie status --watch` looks again.
var watchPoll = time.Second

// watchStatus prints the status again whenever it changes, until
// interrupted (Ctrl-C) or the context ends.
func watchStatus(ctx context.Context, s *Streams, p *project.Plan, asJSON bool) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	var last []byte
	wake := watchWake(ctx, p) // LISTEN when the store is PostgreSQL
	for {
		p.Reload()
		v, err := buildStatus(p)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		if asJSON {
			enc, _ := json.Marshal(v)
			b.Write(append(enc, '\n'))
		} else {
			printStatus(&b, v, s.TTY)
		}
		if !bytes.Equal(b.Bytes(), last) {
			if s.TTY && !asJSON {
				fmt.Fprint(s.Out, "\033[H\033[2J") // clear the screen
			}
			if _, err := s.Out.Write(b.Bytes()); err != nil {
				return err
			}
			last = b.Bytes()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(watchPoll):
		case _, ok := <-wake:
			if !ok {
				wake = nil // the listener is gone: poll alone
			}
		}
	}
}
