package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/taskie-dev/taskie/internal/store"
)

// Watch listens on its own connection for the changes of plan p made from
// anywhere (every claim, heartbeat, release and event NOTIFYs on commit)
// and returns a channel that receives a value soon after each; changes
// close together may come as one. The channel is closed when ctx ends or
// the listening connection fails: the caller then polls.
func (s *Store) Watch(ctx context.Context, p store.PlanKey) (<-chan struct{}, error) {
	cctx, cancel := context.WithTimeout(ctx, ConnectTimeout)
	conn, err := pgx.ConnectConfig(cctx, s.cfg.Copy())
	cancel()
	if err != nil {
		return nil, connectErr(s.url, err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+Channel); err != nil {
		closeConn(conn)
		return nil, s.wrap("listening for changes", err)
	}
	ch := make(chan struct{}, 1)
	want := payload(p)
	go func() {
		defer close(ch)
		defer closeConn(conn)
		for {
			n, err := conn.WaitForNotification(ctx)
			if err != nil {
				return
			}
			if n.Payload == want {
				select {
				case ch <- struct{}{}:
				default: // one wake-up pending is enough
				}
			}
		}
	}()
	return ch, nil
}

func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	conn.Close(ctx)
}
