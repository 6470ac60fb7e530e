//go:build !linux

package fsafe

import "io/fs"

// EachName calls fn with every name in the directory and its type bits
// (here from ReadDir; Linux reads the names without allocating each).
// name is valid during the call only.
func (d *Dir) EachName(fn func(name []byte, typ fs.FileMode)) error {
	ents, err := d.ReadDir()
	if err != nil {
		return err
	}
	for _, e := range ents {
		fn([]byte(e.Name()), e.Type())
	}
	return nil
}
