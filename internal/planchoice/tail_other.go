//go:build !unix

package planchoice

import (
	"fmt"
	"os"
)

// openRegular refuses what is not a regular file before opening it (a named
// pipe could block the open); ReadTail checks the opened file again.
func openRegular(path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	return os.Open(path)
}
