package fleettest

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"
)

// latencyProxy listens on listen and passes every connection to target,
// each chunk in either direction delivered delay after it arrived (a link
// of 2×delay round trip, its bandwidth kept: chunks queue, they do not
// wait for each other). This kernel has no netem; the proxy is the link.
// It stops, cutting its connections, when t ends. It returns the address
// it listens on. A wire, when not nil, sees every connection's traffic.
func latencyProxy(t *testing.T, listen, target string, delay time.Duration, w ...*wire) string {
	t.Helper()
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		t.Fatalf("latency proxy on %s: %v", listen, err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	var tap *wire
	if len(w) > 0 {
		tap = w[0]
	}
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close() // the server is down (a restart): the client sees a reset
				continue
			}
			mu.Lock()
			conns = append(conns, c, s)
			mu.Unlock()
			wc := tap.open()
			wg.Go(func() { delayed(s, c, delay, wc.fromClient) })
			wg.Go(func() { delayed(c, s, delay, wc.fromServer) })
		}
	})
	return ln.Addr().String()
}

// delayed copies src to dst, each chunk delay after it was read; at the
// end of src (or an error) it closes both. seen, when not nil, sees each
// chunk as it is read.
func delayed(dst, src net.Conn, delay time.Duration, seen func([]byte)) {
	type chunk struct {
		b  []byte
		at time.Time
	}
	// A few chunks in flight per direction are plenty for a protocol
	// that waits for its answers; a full queue holds the reader back (TCP
	// flow control), as a slow link does. One read buffer, each chunk
	// copied out at its size: a 32 KB buffer per read and a 4,096-chunk
	// queue per connection were most of the harness's CPU (allocation
	// and collection), with a connection per taskie process.
	q := make(chan chunk, 64)
	go func() {
		defer close(q)
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				b := bytes.Clone(buf[:n])
				if seen != nil {
					seen(b)
				}
				q <- chunk{b, time.Now().Add(delay)}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		time.Sleep(time.Until(c.at))
		if _, err := dst.Write(c.b); err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
	for range q { // let the reader finish
	}
}

// wire counts what crosses the link: connections, and on each the round
// trips — a flight of the client's messages sent after the server last
// spoke, answered — split into those before the connection is ready
// (start-up and authentication) and those of statements, with the
// statements' text.
type wire struct {
	mu     sync.Mutex
	conns  []*wireConn
	paused bool // connections opened now are not watched
}

// pause stops (true) or resumes watching the connections opened from now.
func (w *wire) pause(p bool) {
	w.mu.Lock()
	w.paused = p
	w.mu.Unlock()
}

// wireConn is one connection's traffic as the client sent it.
type wireConn struct {
	w       *wire
	buf     []byte // the client's bytes not parsed yet
	started bool   // the start-up message went by
	ready   bool   // the server said ReadyForQuery once
	turn    bool   // the server spoke since the client's last flight
	flights []flight
}

// flight is one flight of the client's messages.
type flight struct {
	startup   bool     // sent before the connection was ready
	terminate bool     // only a Terminate: the client waits for nothing
	sql       []string // the statements it carries (simple queries, parses)
}

func (w *wire) open() *wireConn {
	if w == nil {
		return nil
	}
	c := &wireConn{w: w, turn: true}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.paused {
		return nil
	}
	w.conns = append(w.conns, c)
	return c
}

func (c *wireConn) fromServer(b []byte) {
	if c == nil {
		return
	}
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	c.turn = true
	// ReadyForQuery is 'Z', length 5, a status byte: the first one ends
	// the start-up (a chunk boundary inside it only delays the count).
	for i := 0; i+5 < len(b); i++ {
		if b[i] == 'Z' && binary.BigEndian.Uint32(b[i+1:]) == 5 {
			c.ready = true
		}
	}
}

func (c *wireConn) fromClient(b []byte) {
	if c == nil {
		return
	}
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	if c.turn {
		c.flights = append(c.flights, flight{startup: !c.ready, terminate: true})
		c.turn = false
	}
	f := &c.flights[len(c.flights)-1]
	c.buf = append(c.buf, b...)
	for {
		if !c.started { // untyped: SSL or GSS request, or the start-up
			if len(c.buf) < 8 {
				return
			}
			n := int(binary.BigEndian.Uint32(c.buf))
			if n < 8 { // not PostgreSQL's protocol: stop reading it
				c.buf, c.started = nil, true
				return
			}
			if len(c.buf) < n {
				return
			}
			if binary.BigEndian.Uint32(c.buf[4:]) == 196608 {
				c.started = true
			}
			f.terminate = false
			c.buf = c.buf[n:]
			continue
		}
		if len(c.buf) < 5 {
			return
		}
		n := 1 + int(binary.BigEndian.Uint32(c.buf[1:]))
		if n < 5 { // a length shorter than its own field: not the protocol
			c.buf = nil
			return
		}
		if len(c.buf) < n {
			return
		}
		typ, body := c.buf[0], c.buf[5:n]
		if typ != 'X' {
			f.terminate = false
		}
		switch typ {
		case 'Q':
			f.sql = append(f.sql, cstring(body))
		case 'P':
			_, rest := cut0(body)
			f.sql = append(f.sql, cstring(rest))
		}
		c.buf = c.buf[n:]
	}
}

func cstring(b []byte) string { s, _ := cut0(b); return string(s) }

func cut0(b []byte) ([]byte, []byte) {
	for i, x := range b {
		if x == 0 {
			return b[:i], b[i+1:]
		}
	}
	return b, nil
}

// wireCount is what a wire saw since it was reset.
type wireCount struct {
	conns    int
	startup  int      // round trips to connect and authenticate
	queries  int      // round trips of statements
	sql      []string // the statements, in order
	perQuery [][]string
}

// take returns what the wire saw and forgets it.
func (w *wire) take() wireCount {
	w.mu.Lock()
	defer w.mu.Unlock()
	var n wireCount
	for _, c := range w.conns {
		n.conns++
		for _, f := range c.flights {
			switch {
			case f.terminate:
			case f.startup:
				n.startup++
			default:
				n.queries++
				n.sql = append(n.sql, f.sql...)
				n.perQuery = append(n.perQuery, f.sql)
			}
		}
	}
	w.conns = nil
	return n
}

// TestLatencyProxyCost bounds what the proxy allocates per connection: the
// fleet opens one for every taskie process, and a proxy that allocated a
// 4,096-chunk queue per direction and 32 KB per read spent most of the
// harness's CPU allocating and collecting.
func TestLatencyProxyCost(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // an echo server
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	addr := latencyProxy(t, "127.0.0.1:0", ln.Addr().String(), time.Millisecond)
	const conns, msgs = 20, 10
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 100)
		for range msgs {
			if _, err := c.Write(buf); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(c, buf); err != nil {
				t.Fatal(err)
			}
		}
		c.Close()
	}
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / conns
	t.Logf("%d bytes allocated per connection of %d round trips", per, msgs)
	if per > 128<<10 {
		t.Errorf("the proxy allocated %d KB per connection of %d round trips of 100 bytes; want at most 128 KB", per>>10, msgs)
	}
}

// TestWireNotPostgres: bytes that are not PostgreSQL's protocol (a length
// of zero) end the wire's reading of a connection instead of looping on
// it forever, which hung the proxy that carried them.
func TestWireNotPostgres(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   [][]byte
	}{
		{"untyped", [][]byte{make([]byte, 300)}},
		{"typed", [][]byte{{0, 0, 0, 8, 0, 3, 0, 0}, {'Q', 0, 0, 0, 0, 0, 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &wire{}
			c := w.open()
			done := make(chan struct{})
			go func() {
				for _, b := range tc.in {
					c.fromClient(b)
				}
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("the wire is still reading 5 s later")
			}
		})
	}
}
