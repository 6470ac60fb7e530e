package domain

import "time"

// Every built-in default lives here; config, state and the workflow read
// them from this file only.
const (
	// DefaultMaxReviews caps review iterations per review cycle.
	DefaultMaxReviews = 8
	// CleanToPass is how many consecutive clean reviews end a cycle.
	CleanToPass = 2
	// DefaultReviewer is the reviewer adapter used when config names none.
	DefaultReviewer = "claude"
	// DefaultReviewerTimeout stays below the agents' 30-minute hook timeout.
	DefaultReviewerTimeout = 25 * time.Minute
	// MaxReviewerTimeout is the first reviewer timeout refused.
	MaxReviewerTimeout = 29 * time.Minute
	// DefaultBlockCap bounds consecutive blocks in one session.
	DefaultBlockCap = 40
	// DefaultOutputFormat is how the hook blocks: exit 2 and stderr.
	DefaultOutputFormat = "exit2"
	// DefaultGroupSize caps a parallel wave.
	DefaultGroupSize = 5
	// DefaultLeaseTTL is how long a claim lasts without a heartbeat.
	DefaultLeaseTTL = 30 * time.Minute
	// DefaultBlockSeverity is the least severe finding that keeps a cycle going.
	DefaultBlockSeverity = Major
	// DefaultRatchetAfter is the iteration from which only blockers count.
	DefaultRatchetAfter = 4
	// DefaultStallAfter is how long a review loop may make no progress,
	// its session gone, before it needs a human (docs/needs-you.md).
	DefaultStallAfter = 30 * time.Minute
)

// DefaultModels is the review model rotation: strongest first.
func DefaultModels() []Model { return []Model{"opus", "sonnet"} }

// DefaultAllowedTools are the tools a Claude reviewer may use.
func DefaultAllowedTools() []string { return []string{"Read", "Grep", "Glob", "Bash", "Write"} }

// DefaultLifecycleTimeouts are the per-state timeouts of the task lifecycle.
func DefaultLifecycleTimeouts() map[string]time.Duration {
	return map[string]time.Duration{
		"pending": time.Hour, "assigned": 15 * time.Minute, "planning": 30 * time.Minute,
		"validated": 15 * time.Minute, "in_progress": 4 * time.Hour, "testing": 30 * time.Minute,
		"quality_review": 30 * time.Minute, "approved": 10 * time.Minute, "committing": 15 * time.Minute,
		"cto_intervention": time.Hour,
	}
}
