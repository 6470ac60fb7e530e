package install

import (
	"testing"
)

// writeFile writes a test's fixture as the user's own file.
func writeFile(p string, data []byte) error { return writeFileIn("", p, data, filePerm) }

var _ = testing.Verbose
