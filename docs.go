package taskie

import "embed"

// Docs holds docs/*.md, which `taskie help <topic>` prints: a user with
// only the binary has the documentation too.
//
//go:embed docs/*.md
var Docs embed.FS
