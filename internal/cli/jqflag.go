package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/itchyny/gojq"
	"github.com/spf13/cobra"
)

// addJQFlags gives every command that has --json a --jq flag (docs/cli.md,
// "--jq"): the expression filters the JSON the command prints, as gh's
// --jq does. The expression is compiled only when the flag is given, so a
// command run without it (the hook above all) pays nothing for it.
func addJQFlags(root *cobra.Command, s *Streams) {
	walk(root, func(c *cobra.Command) {
		if c.Flags().Lookup("json") != nil && c.Flags().Lookup("jq") == nil && c.RunE != nil {
			withJQ(c, s)
		}
	})
}

// withJQ adds --jq to c: given, it implies --json, and stdout goes through
// the filter while c runs.
func withJQ(c *cobra.Command, s *Streams) {
	var expr string
	c.Flags().StringVar(&expr, "jq", "", "filter the JSON output with a jq `expression` (implies --json)")
	run := c.RunE
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if !cmd.Flags().Changed("jq") {
			return run(cmd, args)
		}
		code, err := compileJQ(expr)
		if err != nil {
			return err
		}
		if err := cmd.Flags().Set("json", "true"); err != nil {
			return err
		}
		out := s.Out
		f := &jqWriter{code: code, expr: expr, out: out, indent: s.TTY}
		s.Out = f
		err = run(cmd, args)
		s.Out = out
		if ferr := f.close(); err == nil {
			err = ferr
		}
		return err
	}
}

// compileJQ parses and compiles a --jq expression; a bad one is a usage
// error naming it.
func compileJQ(expr string) (*gojq.Code, error) {
	q, err := gojq.Parse(expr)
	if err == nil {
		var code *gojq.Code
		if code, err = gojq.Compile(q); err == nil {
			return code, nil
		}
	}
	return nil, usageErr(fmt.Errorf("--jq %q: %v", expr, err), "see https://jqlang.org/manual/ for the jq language; `--json` alone shows the input")
}

// jqWriter takes the JSON a command writes (one document, or JSON lines),
// runs the expression on each value as soon as it is whole, and prints the
// results: a string as it is, anything else as JSON (indented on a
// terminal), one per line.
type jqWriter struct {
	code   *gojq.Code
	expr   string
	out    io.Writer
	indent bool
	buf    []byte
	err    error
}

func (w *jqWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	w.buf = append(w.buf, p...)
	w.err = w.drain(false)
	return len(p), w.err
}

// drain filters every whole value of the buffer; at the end (last), a
// value cut short is an error.
func (w *jqWriter) drain(last bool) error {
	dec := json.NewDecoder(bytes.NewReader(w.buf))
	used := int64(0)
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) || (!last && errors.Is(err, io.ErrUnexpectedEOF)) {
			break
		}
		if err != nil {
			return fmt.Errorf("--jq: the command's output is not JSON: %v", err)
		}
		used = dec.InputOffset()
		if err := w.apply(v); err != nil {
			return err
		}
	}
	w.buf = w.buf[:copy(w.buf, w.buf[used:])]
	return nil
}

func (w *jqWriter) apply(v any) error {
	iter := w.code.Run(v)
	for {
		r, ok := iter.Next()
		if !ok {
			return nil
		}
		if err, isErr := r.(error); isErr {
			var halt *gojq.HaltError
			if errors.As(err, &halt) && halt.Value() == nil {
				return nil
			}
			return usageErr(fmt.Errorf("--jq %q: %v", w.expr, err), "`--json` alone shows the input the expression ran on")
		}
		if err := w.print(r); err != nil {
			return err
		}
	}
}

func (w *jqWriter) print(r any) error {
	if s, ok := r.(string); ok {
		_, err := fmt.Fprintln(w.out, s)
		return err
	}
	enc := json.NewEncoder(w.out)
	enc.SetEscapeHTML(false)
	if w.indent {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(r)
}

// close filters what is left once the command is done.
func (w *jqWriter) close() error {
	if w.err != nil {
		return w.err
	}
	return w.drain(true)
}
