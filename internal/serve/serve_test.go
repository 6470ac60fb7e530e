package serve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fake is a Source with one plan and nothing else.
type fake struct{}

func (fake) Fleet(context.Context) (*Fleet, error) {
	return &Fleet{Needs: []Need{{Plan: "p", Task: "1", Kind: "human_escalation", Reason: "task 1 <b>is</b> escalated", Clear: "decide"}}}, nil
}
func (fake) Plan(context.Context, string) (*Plan, error)         { return nil, ErrNotFound }
func (fake) Task(context.Context, string, string) (*Task, error) { return nil, ErrNotFound }
func (fake) ReviewFile(context.Context, string, string) ([]byte, error) {
	return []byte("# R <script>x()</script>\n\n**b** `<i>`\n"), nil
}
func (fake) Version(context.Context) (string, error) { return "v1", nil }

func TestToken(t *testing.T) {
	h, err := New(fake{}, Options{Token: "sesame"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, url string
		want      int
	}{
		{"no token", "/", http.StatusForbidden},
		{"wrong token", "/?token=open", http.StatusForbidden},
		{"asset without token", "/assets/style.css", http.StatusForbidden},
		{"events without token", "/events", http.StatusForbidden},
		{"token", "/?token=sesame", http.StatusOK},
		{"unknown plan", "/plan/nope?token=sesame", http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1:1"+tc.url, nil))
			if rec.Code != tc.want {
				t.Errorf("GET %s: %d, want %d", tc.url, rec.Code, tc.want)
			}
		})
	}
}

func TestNoTokenOnlyLocalHosts(t *testing.T) {
	h, err := New(fake{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]int{"127.0.0.1:80": 200, "localhost:8080": 200, "[::1]:9": 200, "evil.example:80": 403} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "http://"+host+"/", nil))
		if rec.Code != want {
			t.Errorf("Host %s: %d, want %d", host, rec.Code, want)
		}
	}
}

func TestPagesEscape(t *testing.T) {
	h, _ := New(fake{}, Options{})
	for _, url := range []string{"/", "/plan/p/review/task-1-review-1.md"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1"+url, nil))
		body := rec.Body.String()
		if strings.Contains(body, "<b>is</b>") || strings.Contains(body, "<script>x()") || strings.Contains(body, "<i>") {
			t.Errorf("%s: text from the plan files reached the page as markup:\n%s", url, body)
		}
	}
}

func TestMarkdown(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"# Title", "<h2>Title</h2>\n"},
		{"## A <b>", "<h3>A &lt;b&gt;</h3>\n"},
		{"- one\n- **two**", "<ul>\n<li>one</li>\n<li><strong>two</strong></li>\n</ul>\n"},
		{"1. a\n2. *b*", "<ol>\n<li>a</li>\n<li><em>b</em></li>\n</ol>\n"},
		{"```\n<script>alert(1)</script>\n```", "<pre><code>&lt;script&gt;alert(1)&lt;/script&gt;</code></pre>\n"},
		{"use `a*b*c` here", "<p>use <code>a*b*c</code> here</p>\n"},
		{"<img src=x onerror=alert(1)>", "<p>&lt;img src=x onerror=alert(1)&gt;</p>\n"},
		{`[x](javascript:alert(1)) "q" & 'a'`, "<p>[x](javascript:alert(1)) &#34;q&#34; &amp; &#39;a&#39;</p>\n"},
		{"2 * 3 * 4", "<p>2 * 3 * 4</p>\n"},
	} {
		if got := string(Markdown([]byte(tc.in))); got != tc.want {
			t.Errorf("Markdown(%q):\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}
