package codexapi

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
)

// Record is one request the server answered.
type Record struct {
	Seq    int
	Path   string
	Role   Role
	Model  string
	Effort string // reasoning.effort of the request
	Thread string // Codex's Thread-Id header (the session id)
	Tools  []string
	Reply  string // Reply.Summary() of the answer
	// Feedback is the Stop hook block reason an agent reply reacts to.
	Feedback string
	// LastOutput is the output of the request's last function call (what
	// the previous command printed).
	LastOutput string
	// Developer and User are the text of the request's developer and user
	// messages (skills list, hook context, the prompt).
	Developer, User string
}

// Options are the server's optional outputs.
type Options struct {
	// Log, if not nil, gets one line per request.
	Log io.Writer
	// DumpDir, if not empty, gets every request body as <seq>-<role>.json.
	DumpDir string
}

// Server is the scripted Responses API on a loopback port.
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

// BaseURL is the provider's base_url (the API paths are under /v1).
func (s *Server) BaseURL() string { return s.srv.URL + "/v1" }

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
	if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
		// Anything else (a model list, a probe): recorded, and a plain 404
		// as the real API gives for unknown paths.
		s.add(Record{Path: r.Method + " " + r.URL.Path, Role: Side})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`)
		return
	}
	body, err := io.ReadAll(r.Body)
	var req Request
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		http.Error(w, `{"error":{"message":"bad JSON","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	rec := Record{Path: r.URL.Path, Role: Detect(&req), Model: req.Model, Thread: r.Header.Get("Thread-Id"),
		Tools: req.ToolNames(), Developer: req.MessagesText("developer"), User: req.MessagesText("user")}
	if req.Reasoning != nil {
		rec.Effort = req.Reasoning.Effort
	}
	for _, it := range req.Input {
		if it.Type == "function_call_output" {
			rec.LastOutput = it.Text()
		}
	}
	var reply Reply
	switch rec.Role {
	case Agent:
		reply, rec.Feedback = s.script.AgentReply(&req)
	case Reviewer:
		reply = s.script.ReviewerReply(&req)
	default:
		reply = Text("OK.")
	}
	rec.Reply = reply.Summary()
	seq := s.add(rec)
	if s.opts.DumpDir != "" {
		_ = os.WriteFile(filepath.Join(s.opts.DumpDir, fmt.Sprintf("%03d-%s.json", seq, rec.Role)), body, 0o644)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	_ = WriteSSE(w, fmt.Sprintf("resp_fake_%04d", seq), req.Model, reply)
}

func (s *Server) add(rec Record) int {
	s.mu.Lock()
	rec.Seq = len(s.records) + 1
	s.records = append(s.records, rec)
	s.mu.Unlock()
	if s.opts.Log != nil {
		fb := ""
		if rec.Feedback != "" {
			fb = " (after a block: " + firstLine(rec.Feedback) + ")"
		}
		fmt.Fprintf(s.opts.Log, "codexapi #%d %s %s model=%s effort=%s thread=%.8s -> %s%s\n", rec.Seq, rec.Path, rec.Role,
			rec.Model, rec.Effort, rec.Thread, strings.TrimSpace(rec.Reply), fb)
	}
	return rec.Seq
}
