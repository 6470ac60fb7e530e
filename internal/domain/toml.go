package domain

import (
	"fmt"
	"strings"
)

// QuoteTOML quotes s as a TOML basic string, for the values taskie writes
// into Codex's configuration (a config.toml entry, a `-c key=value`).
func QuoteTOML(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
