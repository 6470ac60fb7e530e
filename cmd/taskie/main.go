// Command taskie keeps the state of AI coding-agent plans and drives their
// automatic review loop. See README.md.
package main

import (
	"os"

	"github.com/taskie-dev/taskie"
	"github.com/taskie-dev/taskie/internal/cli"
)

func main() {
	cli.Assets = taskie.Assets
	os.Exit(cli.Main(os.Args[1:]))
}
