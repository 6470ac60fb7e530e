package plan

import "fmt"

// IDPattern is the only shape a plan id may take; it keeps ids usable
// as single path components. It is checked by hand: the hook must not pay
// for compiling regexps at start-up.
const IDPattern = `^[A-Za-z0-9_-]+$`

// ValidID returns an error naming the id and the allowed pattern when id
// could escape the plans directory or is otherwise malformed.
func ValidID(id string) error {
	if !validID(id) {
		return fmt.Errorf("invalid plan id %q: it must match %s", id, IDPattern)
	}
	return nil
}

func validID(id string) bool {
	for _, c := range []byte(id) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return id != ""
}
