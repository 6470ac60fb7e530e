package fleettest

import (
	"net"
	"sync"
	"testing"
	"time"
)

// latencyProxy listens on listen and passes every connection to target,
// each chunk in either direction delivered delay after it arrived (a link
// of 2×delay round trip, its bandwidth kept: chunks queue, they do not
// wait for each other). This kernel has no netem; the proxy is the link.
// It stops, cutting its connections, when t ends. It returns the address
// it listens on.
func latencyProxy(t *testing.T, listen, target string, delay time.Duration) string {
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
			wg.Go(func() { delayed(s, c, delay) })
			wg.Go(func() { delayed(c, s, delay) })
		}
	})
	return ln.Addr().String()
}

// delayed copies src to dst, each chunk delay after it was read; at the
// end of src (or an error) it closes both.
func delayed(dst, src net.Conn, delay time.Duration) {
	type chunk struct {
		b  []byte
		at time.Time
	}
	q := make(chan chunk, 4096)
	go func() {
		defer close(q)
		for {
			b := make([]byte, 32<<10)
			n, err := src.Read(b)
			if n > 0 {
				q <- chunk{b[:n], time.Now().Add(delay)}
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
