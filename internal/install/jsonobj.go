// Package install registers taskie with Claude Code and Codex: it writes the
// agent packages to disk and edits the agents' JSON settings, keeping every
// other setting, hook and key order, and reporting what it changed.
package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
)

// object is a JSON object that keeps its key order, so a rewrite of a
// user's settings file changes only what taskie owns.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

func newObject() *object { return &object{vals: map[string]json.RawMessage{}} }

func parseObject(data []byte) (*object, error) {
	o := newObject()
	if len(bytes.TrimSpace(data)) == 0 {
		return o, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		o.set(t.(string), v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return o, nil
}

func (o *object) set(k string, v json.RawMessage) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) del(k string) bool {
	if _, ok := o.vals[k]; !ok {
		return false
	}
	delete(o.vals, k)
	for i, x := range o.keys {
		if x == k {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
	return true
}

// child returns the object under k, empty when absent.
func (o *object) child(k string) (*object, error) {
	v, ok := o.vals[k]
	if !ok {
		return newObject(), nil
	}
	c, err := parseObject(v)
	if err != nil {
		return nil, fmt.Errorf("%q: %v", k, err)
	}
	return c, nil
}

func (o *object) setChild(k string, c *object) { o.set(k, c.marshal()) }

func (o *object) marshal() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(o.vals[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}

func (o *object) pretty() []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, o.marshal(), "", "  "); err != nil {
		return o.marshal()
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// Change is one file install touched.
type Change struct {
	Path   string `json:"path"`
	Action string `json:"action"` // created, updated, removed, unchanged
	What   string `json:"what,omitempty"`
}

// editJSON loads a JSON settings file (missing = empty), lets fn edit it and
// writes it back only when the content changed. base is the project root
// the file stays in, "" for the user's own file.
func editJSON(base, path string, fn func(*object) error) (Change, error) {
	data, err := readFile(base, path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Change{}, err
	}
	existed := err == nil
	o, err := parseObject(data)
	if err != nil {
		return Change{}, fmt.Errorf("%s: %v; fix or move the file, then run again", path, err)
	}
	before := o.pretty()
	if err := fn(o); err != nil {
		return Change{}, fmt.Errorf("%s: %v", path, err)
	}
	after := o.pretty()
	if existed && sameJSON(before, after) || !existed && len(o.keys) == 0 {
		return Change{Path: path, Action: "unchanged"}, nil
	}
	action := "updated"
	if !existed {
		action = "created"
	}
	return Change{Path: path, Action: action}, writeFileIn(base, path, after, filePerm)
}

// sameJSON compares meaning, not key order: the agents' own CLIs rewrite
// these files in their own order.
func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}
