// Command eventgen writes a project whose plan "log" has an events.jsonl of
// n realistic events (internal/benchfix.EventsPlan), for bench/queries.sh.
//
//	go run ./bench/eventgen -n 100000 -dir /tmp/q100k
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/taskie-dev/taskie/internal/benchfix"
)

func main() {
	n := flag.Int("n", 100000, "number of events")
	dir := flag.String("dir", "", "project directory to create (required)")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "eventgen: -dir is required")
		os.Exit(2)
	}
	plan, tasks, err := benchfix.EventsPlan(*dir, *n)
	if err != nil {
		fmt.Fprintf(os.Stderr, "eventgen: %v\n", err)
		os.Exit(1)
	}
	st, err := os.Stat(filepath.Join(plan, "events.jsonl"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "eventgen: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("%s: %d events, %d tasks, %.1f MB\n", plan, *n, tasks, float64(st.Size())/1e6)
}
