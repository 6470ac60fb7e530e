package plan

import (
	"fmt"
	"regexp"
)

// IDPattern is the only shape a plan id may take (§1); it keeps ids usable
// as single path components.
var IDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// ValidID returns an error naming the id and the allowed pattern when id
// could escape the plans directory or is otherwise malformed.
func ValidID(id string) error {
	if !IDPattern.MatchString(id) {
		return fmt.Errorf("invalid plan id %q: it must match %s", id, IDPattern)
	}
	return nil
}
