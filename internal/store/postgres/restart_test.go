package postgres

import (
	"testing"

	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/store/postgres/pgtest"
)

// A server restarted as a crash would (the fleet test's -m immediate)
// keeps every commit it answered: a command that exited 0 after storing a
// result finds it after the restart. (The throwaway server's asynchronous
// commits lost the last ones: "a result exited 0 and its event is missing".)
func TestRestartKeepsEveryAnsweredCommit(t *testing.T) {
	srv := pgtest.StartForWith(t, pgtest.Options{CrashSafe: true})
	url, err := srv.NewDB(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	m.Close()
	s, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	p := store.PlanKey{Project: "github.com/o/r", Plan: "x"}
	const n = 200
	for i := range n {
		ev := events.Event{Task: "1", Event: store.EventTaskResult, Actor: "a", Meta: map[string]any{"status": "complete", "n": i}}
		if err := s.AppendEvents(ctx, p, ev); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := 0
	if err := s.ScanEvents(ctx, p, func(events.Event) { got++ }); err != nil {
		t.Fatal(err)
	}
	if got != n {
		t.Errorf("%d of %d results answered as stored are in the log after the restart", got, n)
	}
}
