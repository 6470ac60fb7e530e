package hook

import (
	"io"
	"strings"
	"testing"
	"time"
)

// An agent that writes its input and keeps the pipe open must not cost the
// stop its input (it used to wait for EOF until the deadline, then allow).
func TestReadInputOpenPipe(t *testing.T) {
	tests := []struct {
		name, write string
		wantErr     string
		wantCwd     string
	}{
		{"complete object, pipe open", `{"session_id":"s","cwd":"/x","stop_hook_active":true}`, "", "/x"},
		{"object then more, pipe open", `{"cwd":"/y"} trailing`, "", "/y"},
		{"partial object, pipe open", `{"cwd":"/z"`, "no complete hook input", ""},
		{"not JSON", `hello`, "not a JSON object", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, w := io.Pipe()
			defer w.Close()
			go func() { _, _ = io.Copy(w, strings.NewReader(tc.write)) }()
			start := time.Now()
			in, err := ReadInput(r, 300*time.Millisecond)
			took := time.Since(start)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if in.Cwd != tc.wantCwd {
				t.Errorf("cwd = %q, want %q", in.Cwd, tc.wantCwd)
			}
			if took >= 300*time.Millisecond {
				t.Errorf("took %s: waited for the deadline instead of using the complete object", took)
			}
		})
	}
}
