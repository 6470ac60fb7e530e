package continuity

import (
	"errors"
	"strings"
)

// Headings of the Chain Output's two parts.
const (
	HeadingSummary    = "Summary"
	HeadingDownstream = "For Downstream Tasks"
)

// ChainOutput is what a task hands to the tasks that depend on it.
type ChainOutput struct {
	Summary    string `json:"summary"`
	Downstream string `json:"downstream,omitempty"`
}

// ErrEmptyOutput is returned for a chain output without any text.
var ErrEmptyOutput = errors.New("the chain output is empty")

// ChainOutput returns the file's Chain Output section; ok is false when
// the section is missing.
func (f *File) ChainOutput() (ChainOutput, bool) {
	sp, ok := f.section(SectionChain)
	if !ok {
		return ChainOutput{}, false
	}
	lines := make([]string, 0, sp.end-sp.start)
	for i := sp.start + 1; i < sp.end; i++ {
		lines = append(lines, f.text(i))
	}
	return splitChain(lines, f.fence[sp.start+1:sp.end]), true
}

// splitChain sorts lines into Summary and For Downstream Tasks by their
// headings (any level); text before both belongs to the summary.
func splitChain(lines []string, fenced []bool) ChainOutput {
	var sum, down []string
	cur := &sum
	for i, l := range lines {
		if !fenced[i] {
			if _, txt, ok := parseHeading(l); ok {
				switch {
				case strings.EqualFold(txt, HeadingSummary):
					cur = &sum
					continue
				case isDownstream(txt):
					cur = &down
					continue
				}
			}
		}
		*cur = append(*cur, l)
	}
	return ChainOutput{Summary: normalize(strings.Join(sum, "\n")), Downstream: normalize(strings.Join(down, "\n"))}
}

// isDownstream accepts "For Downstream Tasks" and close variants
// ("Downstream", "Notes for downstream tasks").
func isDownstream(text string) bool {
	return strings.Contains(strings.ToLower(text), "downstream")
}

// ParseChainInput reads a chain output given by the user: text with
// optional "### Summary" and "### For Downstream Tasks" headings, or plain
// text that all becomes the summary. A leading "## Chain Output" heading is
// ignored. Other headings of level 1 or 2, subtask headings and unclosed
// code fences are refused because they would break the task file.
func ParseChainInput(data []byte) (ChainOutput, error) {
	text := normalize(string(data))
	lines := strings.Split(text, "\n")
	if _, txt, ok := parseHeading(lines[0]); ok && strings.EqualFold(txt, SectionChain) {
		lines = lines[1:]
	}
	fenced := make([]bool, len(lines))
	var fs fenceState
	for i, l := range lines {
		fenced[i] = fs.step(l)
	}
	c := splitChain(lines, fenced)
	if c.Summary == "" && c.Downstream == "" {
		return ChainOutput{}, ErrEmptyOutput
	}
	if err := checkBlock(c.render(), false); err != nil {
		return ChainOutput{}, err
	}
	return c, nil
}

// render returns the section's lines, heading first.
func (c ChainOutput) render() []string {
	out := []string{"## " + SectionChain, "", "### " + HeadingSummary}
	out = append(out, strings.Split(orNone(c.Summary), "\n")...)
	if c.Downstream != "" {
		out = append(out, "", "### "+HeadingDownstream)
		out = append(out, strings.Split(c.Downstream, "\n")...)
	}
	return out
}

// SetChainOutput replaces the Chain Output section (or adds it at the end
// of the file).
func (f *File) SetChainOutput(c ChainOutput) error {
	block := c.render()
	if err := checkBlock(block, false); err != nil {
		return err
	}
	f.replaceSection(SectionChain, block)
	return nil
}
