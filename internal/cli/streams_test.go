package cli

import (
	"bytes"
	"strings"
)

// testStreams returns streams on buffers for tests: in is stdin, the
// buffers collect stdout and stderr; no terminal, no colour.
func testStreams(in string) (*Streams, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return &Streams{In: strings.NewReader(in), Out: &out, Err: &errOut}, &out, &errOut
}
