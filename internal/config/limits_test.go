package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/internal/state"
)

func TestReviewerTimeoutBelowTheHookTimeout(t *testing.T) {
	tests := []struct {
		value string
		ok    bool
	}{
		{`"25m"`, true},
		{`"28m59s"`, true},
		{`1739`, true},
		{`"29m"`, false},
		{`"30m"`, false},
		{`"2h"`, false},
		{`1740`, false},
	}
	for _, tc := range tests {
		t.Run(tc.value, func(t *testing.T) {
			dir, path := withConfig(t, `{"reviewer_timeout": `+tc.value+`}`)
			c, err := Load(dir)
			if tc.ok {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				if c.ReviewerTimeout.D() >= 29*time.Minute {
					t.Errorf("ReviewerTimeout = %v", c.ReviewerTimeout.D())
				}
				return
			}
			if err == nil {
				t.Fatal("accepted a reviewer_timeout the hook cannot outlive")
			}
			for _, want := range []string{path + ": ", "reviewer_timeout must be below 29m", "the hook itself times out at 30 minutes", "Claude Code would kill it first"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error = %q, want it to contain %q", err, want)
				}
			}
		})
	}
}

func TestMalformedPosition(t *testing.T) {
	tests := []struct {
		content   string
		line, col int
		msg       string
	}{
		{"{\n  \"reviewer\": }\n", 2, 15, "invalid character '}'"},
		{"{\"autopilot\": true,\n\n  \"models\": [\"a\",]}", 3, 18, "invalid character ']'"},
		{"{\"autopilot\": true", 1, 19, "unexpected end of file"},
		{"  [1]", 1, 3, "expected a JSON object"},
		{"{} {}", 1, 4, "unexpected data after the JSON object"},
		{"null", 1, 1, "expected a JSON object, found null"},
	}
	for _, tc := range tests {
		t.Run(tc.content, func(t *testing.T) {
			dir, path := withConfig(t, tc.content)
			_, err := Load(dir)
			var se *state.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Load = %v, want a *state.SyntaxError", err)
			}
			if se.Path != path || se.Line != tc.line || se.Col != tc.col || !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("error = %v, want %s:%d:%d: malformed JSON: …%s", err, path, tc.line, tc.col, tc.msg)
			}
		})
	}
}
