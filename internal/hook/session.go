package hook

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path"
	"time"

	"github.com/taskie-dev/taskie/internal/fsafe"
	"github.com/taskie-dev/taskie/internal/plan"
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
	// LastDecision is the hook's last decision in this session on Plan
	// ("block" or "allow"), made at LastSeen: a session whose last stop was
	// a block is mid-turn on its plan.
	LastDecision string `json:"last_decision,omitempty"`
	// Violations fingerprints the validation problems last reported.
	Violations string `json:"violations,omitempty"`

	path string
	root *fsafe.Root
}

// sessionsDir holds the sessions' memory, relative to the repository root.
const sessionsDir = ".taskie/sessions"

func sessionPath(id string) string {
	name := id
	if len(id) > 128 || plan.ValidID(id) != nil {
		sum := sha256.Sum256([]byte(id))
		name = "h-" + hex.EncodeToString(sum[:8])
	}
	return path.Join(sessionsDir, name+".json")
}

// LoadSession reads a session's memory; a missing or unreadable file is a
// fresh session.
func LoadSession(root *fsafe.Root, id string) *Session {
	s := &Session{ID: id, path: sessionPath(id), root: root}
	if data, err := root.ReadFileLimit(s.path, 1<<20); err == nil {
		_ = json.Unmarshal(data, s)
	}
	return s
}

// Save writes the session's memory.
func (s *Session) Save(now time.Time) error {
	s.LastSeen = now
	if err := s.root.MkdirAll(sessionsDir, 0o755); err != nil {
		return err
	}
	// Sessions write without a lock: only temp files old enough to be
	// a killed writer's are removed.
	_, _ = s.root.CleanTemps(sessionsDir, time.Minute)
	data, _ := json.MarshalIndent(s, "", "  ")
	return s.root.WriteFile(s.path, append(data, '\n'), false) // cheap to lose: no fsync on the hot path
}

// OwnerTTL is how long a session keeps its plan without a stop.
const OwnerTTL = 2 * time.Hour
