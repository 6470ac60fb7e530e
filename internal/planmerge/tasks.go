package planmerge

import "bytes"

// Tasks merges three versions of tasks.md line by line: taskie rewrites a
// task's Status cell whenever its lifecycle moves (docs/lifecycle.md), so
// two clones that move different tasks change different rows, often
// adjacent ones, which git's own merge calls a conflict. When the three
// versions have as many lines, each line takes the side that changed it;
// ok is false when both sides changed one line differently, or rows were
// added or removed (git's merge decides then).
func Tasks(base, ours, theirs []byte) (merged []byte, ok bool) {
	o, a, b := bytes.SplitAfter(base, []byte("\n")), bytes.SplitAfter(ours, []byte("\n")), bytes.SplitAfter(theirs, []byte("\n"))
	if len(o) != len(a) || len(o) != len(b) {
		return nil, false
	}
	var out bytes.Buffer
	for i := range o {
		switch {
		case bytes.Equal(a[i], o[i]):
			out.Write(b[i])
		case bytes.Equal(b[i], o[i]), bytes.Equal(a[i], b[i]):
			out.Write(a[i])
		default:
			return nil, false
		}
	}
	return out.Bytes(), true
}
