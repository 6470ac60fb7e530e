// Package eventstest reads a plan's events.jsonl for tests: the commands
// read the log through the store, tests look at the file itself.
package eventstest

import (
	"errors"
	"io/fs"
	"os"

	"github.com/taskie-dev/taskie/internal/events"
)

// Read returns every readable event of the plan directory dir. Lines that
// do not parse (a torn last line after a crash) are skipped and reported
// as warnings, never fatal; a missing log has no events.
func Read(dir string) ([]events.Event, []string, error) {
	var out []events.Event
	var warns []string
	err := Scan(dir, func(e events.Event) { out = append(out, e) }, func(w string) { warns = append(warns, w) })
	return out, warns, err
}

// Scan streams the events of the plan directory dir to fn.
func Scan(dir string, fn func(events.Event), warn func(string)) error {
	f, err := os.Open(events.Path(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	return events.ScanReader(f, events.Path(dir), fn, warn)
}
