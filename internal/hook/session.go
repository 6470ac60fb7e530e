package hook

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// Session is what the hook remembers about one agent session between stops
// (in .taskie/sessions/, git-ignored). It is what bounds the review loop.
type Session struct {
	ID       string    `json:"session_id"`
	Plan     string    `json:"plan,omitempty"`
	LastSeen time.Time `json:"last_seen"`
	// BlocksInRow counts blocks since the last stop without stop_hook_active.
	BlocksInRow int `json:"blocks_in_row"`
	// LastReviewBlock is the review cycle at the last review block.
	LastReviewBlock *workflow.Mark `json:"last_review_block,omitempty"`
	// Violations fingerprints the validation problems last reported.
	Violations string `json:"violations,omitempty"`

	path string
}

func sessionPath(taskieDir, id string) string {
	name := id
	if len(id) > 128 || plan.ValidID(id) != nil {
		sum := sha256.Sum256([]byte(id))
		name = "h-" + hex.EncodeToString(sum[:8])
	}
	return filepath.Join(taskieDir, "sessions", name+".json")
}

// LoadSession reads a session's memory; a missing or unreadable file is a
// fresh session.
func LoadSession(taskieDir, id string) *Session {
	s := &Session{ID: id, path: sessionPath(taskieDir, id)}
	if data, err := os.ReadFile(s.path); err == nil {
		_ = json.Unmarshal(data, s)
	}
	return s
}

// Save writes the session's memory.
func (s *Session) Save(now time.Time) error {
	s.LastSeen = now
	if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
		return err
	}
	data, _ := json.MarshalIndent(s, "", "  ")
	return state.WriteFileQuick(s.path, append(data, '\n')) // cheap to lose: no fsync on the hot path
}

// Live reports whether another session was seen recently enough to still
// own its plan.
func Live(taskieDir, id string, now time.Time) bool {
	s := LoadSession(taskieDir, id)
	return !s.LastSeen.IsZero() && now.Sub(s.LastSeen) < OwnerTTL
}

// OwnerTTL is how long a session keeps its plan without a stop.
const OwnerTTL = 2 * time.Hour
