// Package taskie holds the agent packages the binary installs: the Claude
// Code plugin (plugin/) and the Codex prompts and hooks (codex/). The code
// lives under internal/ and cmd/taskie.
package taskie

import "embed"

// Assets holds plugin/ and codex/ as they are in the repository.
//
//go:embed all:plugin all:codex
var Assets embed.FS
