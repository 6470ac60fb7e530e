package docstest

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// outsideRef matches a citation of the design notes the repository does not
// hold (written so that this file does not match itself).
var outsideRef = regexp.MustCompile(`S[P]EC|\x{a7}`)

// Every file of the repository — Go code and its comments, the docs, the
// plugin, the Codex skills, the testscripts, the scripts — cites only what a
// maintainer with the repository can open: its own docs, never the design
// notes it was written from.
func TestNothingCitesOutsideDocs(t *testing.T) {
	root := filepath.Join("..", "..")
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil || info.Size() > 4<<20 {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.IndexByte(data, 0) >= 0 {
			return nil // binary
		}
		files++
		if !bytes.Contains(data, []byte("S"+"PEC")) && !bytes.Contains(data, []byte("\u00a7")) {
			return nil // most files: no line to look at (a regexp per line was most of make test's time for this test)
		}
		rel, _ := filepath.Rel(root, path)
		for n, line := range strings.Split(string(data), "\n") {
			if outsideRef.MatchString(line) {
				t.Errorf("%s:%d cites a document the repository does not hold (cite docs/….md instead): %s", filepath.ToSlash(rel), n+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Errorf("only %d files read from the repository", files)
	}
}
