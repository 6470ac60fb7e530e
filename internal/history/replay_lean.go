package history

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/taskie-dev/taskie/internal/events"
)

// ApplyLean replays one event read lean (events.ScanLean), decoding it
// whole only when it can bear on state.json: every event until the log's
// first commit event, and from there on the commit events alone (a line
// naming "sha" or "tsha"). The other lines are counted as skipped by
// kind, as Apply counts them. A line that reads leanly but does not
// decode goes to warn.
func (r *Replayer) ApplyLean(l *events.Lean, warn func(string)) {
	if r.exact && !bytes.Contains(l.Raw, []byte(`"sha":`)) && !bytes.Contains(l.Raw, []byte(`"tsha":`)) {
		r.total++
		r.skipped[l.Event]++
		return
	}
	var e events.Event
	if err := json.Unmarshal(l.Raw, &e); err != nil {
		warn(fmt.Sprintf("line %d: skipped unreadable event line: %v", l.Line, err))
		return
	}
	r.Apply(e)
}
