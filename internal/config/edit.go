package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/taskie-dev/taskie/internal/fsafe"
	"github.com/taskie-dev/taskie/internal/state"
)

// Edit is a change to one setting in one config file, as `taskie config
// set|unset` makes it. Old and New are nil when the setting is absent.
type Edit struct {
	Key      string
	Old, New json.RawMessage
}

// Changed reports whether the edit changes the file.
func (e Edit) Changed() bool {
	return !bytes.Equal(compactJSON(e.Old), compactJSON(e.New)) || (e.Old == nil) != (e.New == nil)
}

// ParseValue turns the text a user typed after `config set KEY` into the
// JSON value of setting key: a string setting takes the text as it is (a
// quoted JSON string also works); any other setting takes JSON (5, true,
// ["opus","sonnet"], {"claimed":"2h"}), and text that is not JSON is taken
// as a string, so that a duration can be written 25m.
func ParseValue(key, text string) json.RawMessage {
	if kind(key) == "a string" {
		var s string
		if strings.HasPrefix(text, `"`) && json.Unmarshal([]byte(text), &s) == nil {
			return json.RawMessage(text)
		}
	} else if json.Valid([]byte(text)) {
		return json.RawMessage(strings.TrimSpace(text))
	}
	b, _ := json.Marshal(text)
	return b
}

// Set sets key to value in the config file rel under root, checked exactly
// as loading checks the file (an unknown key, a value of the wrong type or
// out of range is an *Error naming the file), and writes the file
// atomically keeping its other settings and their order. A missing file is
// created. An unchanged value writes nothing. display names the file in
// errors.
func Set(root *fsafe.Root, rel, display, key string, value json.RawMessage) (Edit, error) {
	if !known(key) {
		return Edit{}, &Error{Problems: []Problem{{File: display, Setting: key, Msg: unknownKey(key)}}}
	}
	if _, msgs := Default().with(key, value); len(msgs) > 0 {
		var ps []Problem
		for _, m := range msgs {
			ps = append(ps, Problem{File: display, Setting: key, Msg: m})
		}
		return Edit{}, &Error{Problems: ps}
	}
	return edit(root, rel, display, key, value)
}

// Unset removes key from the config file rel under root, keeping the
// others and their order. A key the file does not set is no error (the
// Edit is unchanged); an unknown key is, unless the file holds it (removing
// a misspelt setting is how one fixes it).
func Unset(root *fsafe.Root, rel, display, key string) (Edit, error) {
	return edit(root, rel, display, key, nil)
}

func edit(root *fsafe.Root, rel, display, key string, value json.RawMessage) (Edit, error) {
	data, err := root.ReadFileLimit(rel, 1<<20)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Edit{}, err
	}
	var fields []field
	if len(bytes.TrimSpace(data)) > 0 {
		if _, err := state.DecodeObject(display, data); err != nil {
			return Edit{}, err
		}
		if fields, err = orderedFields(data); err != nil {
			return Edit{}, fmt.Errorf("%s: %w", display, err)
		}
	}
	i := slices.IndexFunc(fields, func(f field) bool { return f.key == key })
	e := Edit{Key: key, New: value}
	if i >= 0 {
		e.Old = fields[i].value
	}
	if value == nil && i < 0 && !known(key) {
		return Edit{}, &Error{Problems: []Problem{{File: display, Setting: key, Msg: unknownKey(key)}}}
	}
	if !e.Changed() {
		return e, nil
	}
	switch {
	case value == nil:
		fields = slices.Delete(fields, i, i+1)
	case i >= 0:
		fields[i].value = value
	default:
		fields = append(fields, field{key, value})
	}
	return e, root.WriteFile(rel, encodeFields(fields), true)
}

// field is one top-level setting of a config file, in file order.
type field struct {
	key   string
	value json.RawMessage
}

// orderedFields reads a JSON object's members in the order written.
func orderedFields(data []byte) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	var out []field
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, field{k, v})
	}
	return out, nil
}

// encodeFields writes the members as an indented JSON object.
func encodeFields(fields []field) []byte {
	var b bytes.Buffer
	b.WriteString("{")
	for i, f := range fields {
		if i > 0 {
			b.WriteString(",")
		}
		k, _ := json.Marshal(f.key)
		fmt.Fprintf(&b, "\n  %s: ", k)
		if err := json.Indent(&b, f.value, "  ", "  "); err != nil {
			b.Write(f.value)
		}
	}
	if len(fields) > 0 {
		b.WriteString("\n")
	}
	b.WriteString("}\n")
	return b.Bytes()
}

func compactJSON(v json.RawMessage) []byte {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return v
	}
	return b.Bytes()
}

// KindOf describes the JSON value setting key takes ("a whole number", "a
// list of strings", …).
func KindOf(key string) string { return kind(key) }

// FileValues returns the settings a config file sets, as written (a
// missing file sets none). `taskie config` shows with it the values that
// wait for `taskie trust`.
func FileValues(path string) (map[string]json.RawMessage, error) {
	raw, _, err := readObject(path)
	return raw, err
}
