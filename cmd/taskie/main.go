// Command taskie keeps the state of AI coding-agent plans and drives their
// automatic review loop. See README.md.
package main

import (
	"os"

	"github.com/taskie-dev/taskie"
	"github.com/taskie-dev/taskie/internal/cli"
)

func main() {
	// The Stop hook runs at every agent stop: skip building the command tree.
	if len(os.Args) == 3 && os.Args[1] == "hook" && os.Args[2] == "stop" {
		os.Exit(cli.HookStop())
	}
	if len(os.Args) == 2 && (os.Args[1] == "--version" || os.Args[1] == "-v") {
		_, _ = os.Stdout.WriteString(cli.VersionLine())
		return
	}
	cli.Assets = taskie.Assets
	os.Exit(cli.Main(os.Args[1:]))
}
