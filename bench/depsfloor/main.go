// Command depsfloor is the floor of taskie's start-up: a program that links
// exactly the packages taskie's own code imports from outside its module
// (the standard library's and other modules'), so that the Go runtime
// initialises every one of them at start as it does for taskie, and then
// only reads its stdin and exits, as the bare reference does. bench/run
// builds it and times taskie against it and against the bare reference:
// what taskie costs above it is taskie's own; what it costs above the bare
// reference is the price of linking those packages in one binary.
//
// TestImportsAreTaskies (cmd/taskie) checks the list against `go list`;
// when it fails, it prints the list to paste here.
package main

import (
	_ "bufio"
	_ "bytes"
	_ "cmp"
	_ "context"
	_ "crypto/rand"
	_ "crypto/sha256"
	_ "crypto/subtle"
	_ "crypto/tls"
	_ "embed"
	_ "encoding/binary"
	_ "encoding/hex"
	_ "encoding/json"
	_ "errors"
	_ "fmt"
	_ "hash/fnv"
	_ "html"
	_ "html/template"
	"io"
	_ "io/fs"
	_ "log/slog"
	_ "maps"
	_ "math"
	_ "math/bits"
	_ "math/rand/v2"
	_ "net"
	_ "net/http"
	_ "net/url"
	"os"
	_ "os/exec"
	_ "os/signal"
	_ "path"
	_ "path/filepath"
	_ "reflect"
	_ "regexp"
	_ "runtime"
	_ "runtime/debug"
	_ "slices"
	_ "sort"
	_ "strconv"
	_ "strings"
	_ "sync"
	_ "sync/atomic"
	_ "syscall"
	_ "text/tabwriter"
	_ "text/template"
	_ "time"
	_ "unicode"
	_ "unicode/utf8"

	_ "github.com/itchyny/gojq"
	_ "github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/pgconn"
	_ "github.com/spf13/cobra"
	_ "golang.org/x/sys/unix"
	_ "golang.org/x/term"
)

func main() { _, _ = io.Copy(io.Discard, os.Stdin) }
