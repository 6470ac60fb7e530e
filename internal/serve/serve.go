// Package serve is `taskie serve`: a read-only web dashboard of the plans of
// a repository (docs/dashboard.md). It renders HTML on the server from a
// Source (the CLI's readers), serves its few assets from the binary, and
// tells open pages to reload their data through server-sent events when
// the Source's version changes. It never writes a plan file.
//
// Nothing here runs at package initialisation: the hooks link this package
// and must not pay for it.
package serve

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
)

//go:embed assets
var assets embed.FS

// ErrNotFound is a plan, task or review file that does not exist. (A
// type, not errors.New: the package allocates nothing at start.)
var ErrNotFound error = notFound{}

type notFound struct{}

func (notFound) Error() string { return "not found" }

// Options configure the server.
type Options struct {
	// Token is required on every request (?token=…); "" serves without.
	Token string
	// Poll is how often the event stream looks at the Source's version;
	// 0 is 500 ms.
	Poll time.Duration
	// Logf reports a page that failed; nil is silent.
	Logf func(format string, args ...any)
}

// NewToken returns a random token for the URL.
func NewToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand never fails on supported systems
	return hex.EncodeToString(b)
}

// server is the handler.
type server struct {
	src  Source
	opt  Options
	tmpl *template.Template
	mux  *http.ServeMux
}

// New returns the dashboard's handler.
func New(src Source, opt Options) (http.Handler, error) {
	if opt.Poll <= 0 {
		opt.Poll = 500 * time.Millisecond
	}
	s := &server{src: src, opt: opt, mux: http.NewServeMux()}
	t, err := template.New("").Funcs(s.funcs()).ParseFS(assets, "assets/*.html")
	if err != nil {
		return nil, fmt.Errorf("dashboard templates: %w", err)
	}
	s.tmpl = t
	s.mux.HandleFunc("GET /{$}", s.fleet)
	s.mux.HandleFunc("GET /plan/{plan}", s.plan)
	s.mux.HandleFunc("GET /plan/{plan}/task/{task}", s.task)
	s.mux.HandleFunc("GET /plan/{plan}/review/{name}", s.review)
	s.mux.HandleFunc("GET /events", s.events)
	s.mux.HandleFunc("GET /assets/{name}", s.asset)
	return s, nil
}

// ServeHTTP checks the token and the host, sets the safety headers, and
// routes.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer") // the token is in the URL
	h.Set("Cache-Control", "no-store")
	if s.opt.Token == "" && !localHost(r.Host) {
		// Without a token, a page of another site could reach the server
		// through a DNS name pointed at 127.0.0.1: only local names pass.
		http.Error(w, "forbidden: this dashboard answers only to localhost without a token", http.StatusForbidden)
		return
	}
	if s.opt.Token != "" && subtle.ConstantTimeCompare([]byte(r.URL.Query().Get("token")), []byte(s.opt.Token)) != 1 {
		http.Error(w, "forbidden: open the URL `taskie serve` printed (it carries the token)", http.StatusForbidden)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// localHost reports whether a Host header names this machine.
func localHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// funcs are the templates' helpers.
func (s *server) funcs() template.FuncMap {
	return template.FuncMap{
		// u is a link inside the dashboard, carrying the token.
		"u": func(parts ...string) string {
			p := "/"
			for i, x := range parts {
				if i > 0 {
					p += "/"
				}
				p += url.PathEscape(x)
			}
			if len(parts) > 0 && parts[0] == "" {
				p = "/"
			}
			if s.opt.Token != "" {
				p += "?token=" + url.QueryEscape(s.opt.Token)
			}
			return p
		},
		"usd":       func(f float64) string { return fmt.Sprintf("$%.2f", f) },
		"time":      func(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") },
		"kindLabel": kindLabel,
		"severe":    severe,
		"lifecycle": lifecycleSVG,
		"costChart": costSVG,
		"hasCosts":  func(c []CostPoint) bool { return len(c) > 0 },
		"ndash":     func(s string) string { return or(s, "–") },
	}
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// page is what every template gets.
type page struct {
	Title   string
	Version string
	Crumbs  []crumb
	Data    any
	Body    template.HTML // a rendered review file
}

type crumb struct{ Label, Href string }

// render writes a page; version is read before the data so that a change
// between the two only costs one more reload.
func (s *server) render(w http.ResponseWriter, r *http.Request, name, title string, crumbs []crumb, data func(ctx context.Context) (any, template.HTML, error)) {
	ctx := r.Context()
	ver, _ := s.src.Version(ctx)
	d, body, err := data(ctx)
	if errors.Is(err, ErrNotFound) {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	if err != nil {
		if s.opt.Logf != nil {
			s.opt.Logf("taskie serve: %s: %v", r.URL.Path, err)
		}
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	p := page{Title: title, Version: ver, Crumbs: crumbs, Data: d, Body: body}
	if err := s.tmpl.ExecuteTemplate(w, name, p); err != nil && s.opt.Logf != nil {
		s.opt.Logf("taskie serve: %s: %v", r.URL.Path, err)
	}
}

func (s *server) fleet(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, "fleet.html", "taskie: every plan", nil, func(ctx context.Context) (any, template.HTML, error) {
		f, err := s.src.Fleet(ctx)
		return f, "", err
	})
}

func (s *server) plan(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("plan")
	s.render(w, r, "plan.html", "taskie: plan "+id, []crumb{{"every plan", s.link("")}}, func(ctx context.Context) (any, template.HTML, error) {
		p, err := s.src.Plan(ctx, id)
		return p, "", err
	})
}

func (s *server) task(w http.ResponseWriter, r *http.Request) {
	id, task := r.PathValue("plan"), r.PathValue("task")
	crumbs := []crumb{{"every plan", s.link("")}, {"plan " + id, s.link("plan", id)}}
	s.render(w, r, "task.html", "taskie: plan "+id+" task "+task, crumbs, func(ctx context.Context) (any, template.HTML, error) {
		t, err := s.src.Task(ctx, id, task)
		return t, "", err
	})
}

func (s *server) review(w http.ResponseWriter, r *http.Request) {
	id, name := r.PathValue("plan"), r.PathValue("name")
	crumbs := []crumb{{"every plan", s.link("")}, {"plan " + id, s.link("plan", id)}}
	s.render(w, r, "review.html", "taskie: "+name, crumbs, func(ctx context.Context) (any, template.HTML, error) {
		text, err := s.src.ReviewFile(ctx, id, name)
		if err != nil {
			return nil, "", err
		}
		return struct{ Plan, Name string }{id, name}, Markdown(text), nil
	})
}

// link is the template helper u, for Go code.
func (s *server) link(parts ...string) string {
	return s.funcs()["u"].(func(...string) string)(parts...)
}

// asset serves an embedded stylesheet or script.
func (s *server) asset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	data, err := fs.ReadFile(assets, path.Join("assets", name))
	if err != nil || strings.HasSuffix(name, ".html") {
		http.NotFound(w, r)
		return
	}
	switch path.Ext(name) {
	case ".css":
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	case ".js":
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	}
	_, _ = w.Write(data)
}

// events is the server-sent event stream: the Source's version when the
// page connects and whenever it changes; a page whose version differs
// reloads its data.
func (s *server) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	ctx := r.Context()
	last, tick := "", time.NewTicker(s.opt.Poll)
	defer tick.Stop()
	quiet := 0
	for {
		v, err := s.src.Version(ctx)
		switch {
		case err == nil && v != last:
			if _, err := fmt.Fprintf(w, "event: version\ndata: %s\n\n", v); err != nil {
				return
			}
			fl.Flush()
			last, quiet = v, 0
		case quiet*int(s.opt.Poll) >= int(15*time.Second):
			// A comment keeps proxies and the browser from timing out.
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil {
				return
			}
			fl.Flush()
			quiet = 0
		default:
			quiet++
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
