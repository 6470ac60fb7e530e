// Package hook implements the agents' hook protocols (docs/hook.md): it decodes
// the hook's stdin, runs the Stop decision around the pure workflow core,
// and encodes allow/block the way Claude Code and Codex expect.
package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Input is the hook JSON the agent writes on stdin. Unknown fields are ignored.
type Input struct {
	SessionID      string `json:"session_id"`
	Cwd            string `json:"cwd"`
	TranscriptPath string `json:"transcript_path"`
	HookEventName  string `json:"hook_event_name"`
	// LastAssistantMessage is the agent's last words (Claude Code sends it).
	LastAssistantMessage string `json:"last_assistant_message"`
	StopHookActive       bool   `json:"-"`
	// Agent is Claude Code or Codex, told apart by what the input holds.
	Agent Agent `json:"-"`
}

// MaxInput bounds what is read from stdin; the real inputs are a few hundred bytes.
const MaxInput = 1 << 20

// ReadInput reads and decodes stdin. A complete JSON object is used as
// soon as it is read, even if the agent keeps the pipe open; without one,
// it gives up after the deadline so an open pipe can never hang the agent.
func ReadInput(r io.Reader, deadline time.Duration) (Input, error) {
	type result struct {
		data []byte
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		lr := &io.LimitedReader{R: r, N: MaxInput + 1}
		var raw json.RawMessage
		err := json.NewDecoder(lr).Decode(&raw)
		switch {
		case lr.N <= 0:
			err = fmt.Errorf("hook input larger than %d bytes", MaxInput)
		case errors.Is(err, io.EOF):
			err = errors.New("empty hook input on stdin")
		case err != nil:
			err = fmt.Errorf("hook input is not a JSON object: %v", err)
		}
		ch <- result{raw, err}
	}()
	select {
	case res := <-ch:
		if res.err != nil {
			return Input{}, res.err
		}
		return Decode(res.data)
	case <-time.After(deadline):
		return Input{}, fmt.Errorf("no complete hook input on stdin after %s", deadline)
	}
}

// Decode parses hook JSON leniently: stop_hook_active may be a bool or a
// string, and unknown fields are fine.
func Decode(data []byte) (Input, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return Input{}, errors.New("empty hook input on stdin")
	}
	var in Input
	if err := json.Unmarshal(data, &in); err != nil {
		return Input{}, fmt.Errorf("hook input is not a JSON object: %v", err)
	}
	// What the typed fields cannot hold, in one more pass (not two): the
	// flag's either type and the agent's marks (agentOf's).
	var flags struct {
		Active         any    `json:"stop_hook_active"`
		TurnID         any    `json:"turn_id"`
		TranscriptPath string `json:"transcript_path"`
	}
	_ = json.Unmarshal(data, &flags)
	switch v := flags.Active.(type) {
	case bool:
		in.StopHookActive = v
	case string:
		in.StopHookActive = strings.EqualFold(v, "true")
	}
	in.Agent = agentOf(flags.TurnID, flags.TranscriptPath)
	return in, nil
}
