package pgtest

import (
	"encoding/binary"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// SilentProxy returns rawURL pointed at a proxy on 127.0.0.1 that passes
// a connection's start-up (TLS refusal, start-up message, authentication)
// between the client and the server, and then goes silent: the client's
// first query is swallowed with everything after it, and nothing more
// comes back. A connection succeeds and its first statement waits forever,
// as behind a network cut without a reset. The proxy stops when t ends.
func SilentProxy(t testing.TB, rawURL string) string {
	return Proxy(t, rawURL, nil, forwardStartup)
}

// Proxy returns rawURL pointed at a proxy on 127.0.0.1 that opens a
// connection to the server for each client connection, counts them in n
// (when not nil), copies the server's answers back, and lets up carry the
// client's messages to the server (nil: all of them). It stops when t ends.
func Proxy(t testing.TB, rawURL string, n *atomic.Int64, up func(c, s net.Conn)) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	if up == nil {
		up = func(c, s net.Conn) { io.Copy(s, c); s.Close() }
	}
	target := u.Host
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if n != nil {
				n.Add(1)
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, s)
			mu.Unlock()
			wg.Add(2)
			go func() { defer wg.Done(); io.Copy(c, s); c.Close() }()
			go func() { defer wg.Done(); up(c, s) }()
		}
	}()
	u.Host = ln.Addr().String()
	return u.String()
}

// forwardStartup copies the client's messages to the server until the
// first one that is a query (simple or extended protocol), then reads and
// drops the rest.
func forwardStartup(c, s net.Conn) {
	defer io.Copy(io.Discard, c)
	// Untyped messages first: SSL or GSS requests, then the start-up.
	for {
		var hdr [8]byte
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint32(hdr[:4]))
		body := make([]byte, max(n-8, 0))
		if _, err := io.ReadFull(c, body); err != nil {
			return
		}
		if _, err := s.Write(append(hdr[:], body...)); err != nil {
			return
		}
		if code := binary.BigEndian.Uint32(hdr[4:]); code == 196608 { // protocol 3.0: the start-up
			break
		}
	}
	for {
		var hdr [5]byte
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return
		}
		switch hdr[0] {
		case 'Q', 'P', 'B', 'E', 'D', 'S', 'F':
			return // a query: silence from here on
		}
		n := int(binary.BigEndian.Uint32(hdr[1:]))
		body := make([]byte, max(n-4, 0))
		if _, err := io.ReadFull(c, body); err != nil {
			return
		}
		if _, err := s.Write(append(hdr[:], body...)); err != nil {
			return
		}
	}
}

// CutProxy returns rawURL pointed at a proxy that passes everything
// until the client sends a message holding marker (a table name, say),
// and then closes both sides without passing it: a connection lost in
// the middle of a command, after its first statements succeeded.
func CutProxy(t testing.TB, rawURL, marker string) string {
	return Proxy(t, rawURL, nil, func(c, s net.Conn) {
		defer s.Close()
		defer c.Close()
		// Untyped messages first: SSL or GSS requests, then the start-up.
		for {
			var hdr [8]byte
			if _, err := io.ReadFull(c, hdr[:]); err != nil {
				return
			}
			body := make([]byte, max(int(binary.BigEndian.Uint32(hdr[:4]))-8, 0))
			if _, err := io.ReadFull(c, body); err != nil {
				return
			}
			if _, err := s.Write(append(hdr[:], body...)); err != nil {
				return
			}
			if binary.BigEndian.Uint32(hdr[4:]) == 196608 {
				break
			}
		}
		for {
			var hdr [5]byte
			if _, err := io.ReadFull(c, hdr[:]); err != nil {
				return
			}
			body := make([]byte, max(int(binary.BigEndian.Uint32(hdr[1:]))-4, 0))
			if _, err := io.ReadFull(c, body); err != nil {
				return
			}
			if strings.Contains(string(body), marker) {
				return // cut
			}
			if _, err := s.Write(append(hdr[:], body...)); err != nil {
				return
			}
		}
	})
}
