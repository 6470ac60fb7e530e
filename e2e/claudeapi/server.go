package claudeapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Record is one request the server answered.
type Record struct {
	Seq     int
	Path    string // URL path, e.g. /v1/messages
	Role    Role
	Model   string
	Session string // the CLI's X-Claude-Code-Session-Id header
	Tools   []string
	Stream  bool
	Reply   string // Reply.Summary() of the answer
	// Feedback is the Stop hook block message an agent reply reacts to.
	Feedback string
	// ToolErrors are the tool results marked is_error in the request's
	// last message (a denied permission, a failed command, …).
	ToolErrors []string
	// ToolResults are the texts of all tool results in the request's last
	// message (the output of the tool call the model made before).
	ToolResults []string
	// FirstUserText is the text of the first user message (the prompt).
	FirstUserText string
	// SessionStartContext is what SessionStart hooks added to the
	// conversation ("" when no hook ran).
	SessionStartContext string
}

// Options are the server's optional outputs.
type Options struct {
	// Log, if not nil, gets one line per request.
	Log io.Writer
	// DumpDir, if not empty, gets every request body as <seq>-<role>.json,
	// to see exactly what the CLI sent.
	DumpDir string
}

// SessionStartMarker starts the text in which Claude Code hands a
// SessionStart hook's additional context to the model.
const SessionStartMarker = "SessionStart hook additional context"

// Server is the scripted Messages API on a loopback port.
type Server struct {
	script Script
	opts   Options
	srv    *httptest.Server

	mu      sync.Mutex
	records []Record
}

// Start serves the script on 127.0.0.1 until Close.
func Start(script Script, opts Options) *Server {
	s := &Server{script: script, opts: opts}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the base URL for ANTHROPIC_BASE_URL.
func (s *Server) URL() string { return s.srv.URL }

// Update changes the script between runs of the CLI, e.g. the agent's
// next turn: requests that come later follow the new script.
func (s *Server) Update(f func(*Script)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.script)
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Records returns every request answered so far, in order.
func (s *Server) Records() []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Record(nil), s.records...)
}

// Calls returns the records of one role.
func (s *Server) Calls(role Role) []Record {
	var out []Record
	for _, r := range s.Records() {
		if r.Role == role {
			out = append(out, r)
		}
	}
	return out
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		s.messages(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		s.add(Record{Path: r.URL.Path, Role: Side, Reply: "count_tokens"})
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"input_tokens":100}`)
	default:
		// Connectivity probes (HEAD /) and anything unknown: a harmless 200.
		s.add(Record{Path: r.Method + " " + r.URL.Path, Role: Side})
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{}`)
	}
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req Request
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad JSON"}}`, http.StatusBadRequest)
		return
	}
	rec := Record{
		Path: r.URL.Path, Role: Detect(&req), Model: req.Model, Stream: req.Stream,
		Session: r.Header.Get("X-Claude-Code-Session-Id"), Tools: req.ToolNames(),
		ToolErrors: toolErrors(req.Messages), ToolResults: toolResults(req.Messages),
	}
	for _, m := range req.Messages {
		if m.Role == "user" && rec.FirstUserText == "" {
			rec.FirstUserText = m.Text()
		}
		if _, ctx, ok := strings.Cut(m.Text(), SessionStartMarker); ok && rec.SessionStartContext == "" {
			ctx, _, _ = strings.Cut(ctx, "\n\n\n") // the CLI's own system text follows
			rec.SessionStartContext = SessionStartMarker + ctx
		}
	}
	s.mu.Lock()
	script := s.script
	s.mu.Unlock()
	var reply Reply
	switch rec.Role {
	case Agent:
		reply, rec.Feedback = script.AgentReply(&req)
	case Reviewer:
		if script.ReviewerGate != nil {
			var limit <-chan time.Time
			if script.ReviewerGateLimit > 0 {
				timer := time.NewTimer(script.ReviewerGateLimit)
				defer timer.Stop()
				limit = timer.C
			}
			select {
			case <-script.ReviewerGate:
			case <-limit:
			case <-r.Context().Done():
			}
		}
		reply = script.ReviewerReply(&req)
	default:
		reply = Text("OK.")
	}
	rec.Reply = reply.Summary()
	seq := s.add(rec)
	if s.opts.DumpDir != "" {
		_ = os.WriteFile(filepath.Join(s.opts.DumpDir, fmt.Sprintf("%03d-%s.json", seq, rec.Role)), body, 0o644)
	}

	id := fmt.Sprintf("msg_fake_%04d", seq)
	toolID := fmt.Sprintf("toolu_fake_%04d", seq)
	if req.Stream {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		_ = WriteSSE(w, id, req.Model, toolID, reply)
	} else {
		w.Header().Set("Content-Type", "application/json")
		_ = WriteJSON(w, id, req.Model, toolID, reply)
	}
}

func (s *Server) add(rec Record) int {
	s.mu.Lock()
	rec.Seq = len(s.records) + 1
	s.records = append(s.records, rec)
	s.mu.Unlock()
	if s.opts.Log != nil {
		fmt.Fprintf(s.opts.Log, "claudeapi #%d %s %s model=%s session=%.8s -> %s%s\n", rec.Seq, rec.Path, rec.Role,
			rec.Model, rec.Session, rec.Reply, errorsNote(rec.ToolErrors))
	}
	return rec.Seq
}

// toolErrors lists the failed tool results in the last message.
func toolErrors(ms []Message) []string {
	if len(ms) == 0 {
		return nil
	}
	var errs []string
	for _, b := range ms[len(ms)-1].Blocks() {
		if b.Type == "tool_result" && b.IsError {
			errs = append(errs, Message{Content: b.Content}.Text())
		}
	}
	return errs
}

// toolResults lists the text of every tool result in the last message.
func toolResults(ms []Message) []string {
	if len(ms) == 0 {
		return nil
	}
	var out []string
	for _, b := range ms[len(ms)-1].Blocks() {
		if b.Type == "tool_result" {
			out = append(out, Message{Content: b.Content}.Text())
		}
	}
	return out
}

func errorsNote(errs []string) string {
	if len(errs) == 0 {
		return ""
	}
	return " (after tool errors: " + strings.Join(errs, " | ") + ")"
}
