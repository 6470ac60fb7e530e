package postgres

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"math/big"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/internal/store/postgres/pgtest"
)

// A URL without sslmode means prefer, as in libpq: TLS is asked for on the
// connection itself and, refused by a server without TLS, the command goes
// on in plain text on that same connection — one TCP connection and one
// server process per command, not a refused one and then another.
func TestPreferTLSOneConnection(t *testing.T) {
	url := pgtest.DB(t)
	for _, tc := range []struct {
		name, query string
		want        int64
	}{
		{"no sslmode (prefer)", "", 1},
		{"sslmode=prefer", "sslmode=prefer", 1},
		{"sslmode=disable", "sslmode=disable", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, _, _ := strings.Cut(url, "?")
			u := base
			if tc.query != "" {
				u += "?" + tc.query
			}
			var n atomic.Int64
			s, err := Connect(context.Background(), pgtest.Proxy(t, u, &n, nil))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.Now(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := n.Load(); got != tc.want {
				t.Errorf("%d connections to the server, want %d", got, tc.want)
			}
		})
	}
}

// sslmode=require against a server without TLS still fails: the
// preference is not a downgrade.
func TestRequireTLSStillRequired(t *testing.T) {
	base, _, _ := strings.Cut(pgtest.DB(t), "?")
	s, err := Connect(context.Background(), base+"?sslmode=require")
	if err == nil {
		s.Close()
		t.Fatal("connected in plain text with sslmode=require")
	}
}

// A server that accepts TLS gets it on the same connection: after its S,
// the handshake, then the client's messages go encrypted; after N, in
// plain text; any other answer is an error.
func TestStartTLSAnswers(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	srvCfg := &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	for _, answer := range []byte{'S', 'N', 'E'} {
		t.Run(string(answer), func(t *testing.T) {
			client, server := net.Pipe()
			defer client.Close()
			got := make(chan string, 1)
			go func() {
				defer server.Close()
				req := make([]byte, 8)
				if _, err := io.ReadFull(server, req); err != nil || !bytes.Equal(req, []byte{0, 0, 0, 8, 4, 210, 22, 47}) {
					got <- fmt.Sprintf("request %v, %v", req, err)
					return
				}
				server.Write([]byte{answer})
				var r io.Reader = server
				if answer == 'S' {
					ts := tls.Server(server, srvCfg)
					if err := ts.Handshake(); err != nil {
						got <- "handshake: " + err.Error()
						return
					}
					r = ts
				}
				msg := make([]byte, 5)
				io.ReadFull(r, msg)
				got <- string(msg)
			}()
			conn, err := startTLS(context.Background(), client, &tls.Config{InsecureSkipVerify: true})
			if answer == 'E' {
				if err == nil {
					t.Fatal("an answer other than S or N was taken")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, isTLS := conn.(*tls.Conn); isTLS != (answer == 'S') {
				t.Errorf("answer %c: TLS %v", answer, isTLS)
			}
			conn.Write([]byte("hello"))
			if msg := <-got; msg != "hello" {
				t.Errorf("the server read %q", msg)
			}
		})
	}
}
