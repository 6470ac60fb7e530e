package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"os/signal"
	"path"
	"time"

	"github.com/taskie-dev/taskie/internal/fsafe"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/store"
)

// watchPoll is how often `taskie status --watch` looks again.
var watchPoll = time.Second

// watchStatus prints the status again whenever it changes, until
// interrupted (Ctrl-C) or the context ends.
func watchStatus(ctx context.Context, s *Streams, p *store.Plan, asJSON bool) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	var last []byte
	wake := watchWake(ctx, p) // LISTEN when the store is PostgreSQL
	return watchLoop(ctx, watchPoll, []<-chan struct{}{wake}, func() error {
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
		if bytes.Equal(b.Bytes(), last) {
			return nil
		}
		if s.TTY && !asJSON {
			fmt.Fprint(s.Out, "\033[H\033[2J") // clear the screen
		}
		if _, err := s.Out.Write(b.Bytes()); err != nil {
			return err
		}
		last = b.Bytes()
		return nil
	})
}

// watchLoop is the wake machinery of `taskie status --watch` and `taskie
// watch`: it calls look at once, then whenever one of wakes fires or every
// `every`, until ctx ends (nil) or look fails. Nil wakes are ignored; a
// closed one (a listener gone) leaves the others and the period.
func watchLoop(ctx context.Context, every time.Duration, wakes []<-chan struct{}, look func() error) error {
	wake := mergeWakes(ctx, wakes)
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		if err := look(); err != nil {
			return err
		}
		t.Reset(every)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case _, ok := <-wake:
			if !ok {
				wake = nil // every listener is gone: poll alone
			} else if !settle(ctx, wake) {
				wake = nil
			}
		}
	}
}

// Writes of one command wake the watch several times in a row (a claim,
// then its lifecycle move): it redraws once they stop, so the screen never
// shows the half of a command.
const (
	settleQuiet = 150 * time.Millisecond // no wake for this long: the burst is over
	settleMost  = time.Second            // a steady stream still redraws this often
)

// settle waits until wake has been quiet for settleQuiet (at most
// settleMost); false when wake closed meanwhile.
func settle(ctx context.Context, wake <-chan struct{}) bool {
	most := time.NewTimer(settleMost)
	defer most.Stop()
	quiet := time.NewTimer(settleQuiet)
	defer quiet.Stop()
	for {
		select {
		case <-ctx.Done():
			return true
		case <-most.C:
			return true
		case <-quiet.C:
			return true
		case _, ok := <-wake:
			if !ok {
				return false
			}
			quiet.Reset(settleQuiet)
		}
	}
}

// mergeWakes fans the wake channels in to one, closed once all of them
// are; nil when there is none.
func mergeWakes(ctx context.Context, wakes []<-chan struct{}) <-chan struct{} {
	var live []<-chan struct{}
	for _, w := range wakes {
		if w != nil {
			live = append(live, w)
		}
	}
	switch len(live) {
	case 0:
		return nil
	case 1:
		return live[0]
	}
	out := make(chan struct{}, 1)
	done := make(chan struct{}, len(live))
	for _, w := range live {
		go func() {
			defer func() { done <- struct{}{} }()
			for {
				select {
				case <-ctx.Done():
					return
				case _, ok := <-w:
					if !ok {
						return
					}
					select {
					case out <- struct{}{}:
					default: // one wake-up pending is enough
					}
				}
			}
		}()
	}
	go func() {
		for range live {
			<-done
		}
		close(out)
	}()
	return out
}

// filesWake wakes when a file of the repository's taskie directory
// changes: its plans' files, their logs, the config. It compares the
// names, sizes and times of the entries every poll (a stat of each entry,
// no file read), which is cheap and works on every file system.
func filesWake(ctx context.Context, root *fsafe.Root, poll time.Duration) <-chan struct{} {
	ch := make(chan struct{}, 1)
	go func() {
		last := taskieFingerprint(root)
		t := time.NewTicker(poll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if f := taskieFingerprint(root); f != last {
				last = f
				select {
				case ch <- struct{}{}:
				default:
				}
			}
		}
	}()
	return ch
}

// taskieFingerprint sums up the entries of .taskie, .taskie/logs,
// .taskie/plans, each plan's directory and the directories in it
// (reviews); what cannot be listed counts as missing.
func taskieFingerprint(root *fsafe.Root) uint64 {
	h := fnv.New64a()
	list := func(dir string) []fs.DirEntry {
		entries, err := root.ReadDir(dir)
		if err != nil {
			fmt.Fprintf(h, "%s\x00-\n", dir)
			return nil
		}
		for _, e := range entries {
			if fi, err := e.Info(); err == nil {
				fmt.Fprintf(h, "%s/%s\x00%d\x00%d\x00%d\n", dir, e.Name(), fi.Size(), fi.ModTime().UnixNano(), fi.Mode())
			}
		}
		return entries
	}
	list(".taskie")
	list(".taskie/logs")
	for _, e := range list(".taskie/plans") {
		if !e.IsDir() || plan.ValidID(e.Name()) != nil {
			continue
		}
		dir := path.Join(".taskie/plans", e.Name())
		for _, sub := range list(dir) {
			if sub.IsDir() {
				list(path.Join(dir, sub.Name()))
			}
		}
	}
	return h.Sum64()
}
