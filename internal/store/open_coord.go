package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/taskie-dev/taskie/internal/clock"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/gitwt"
)

// DatabaseURLEnv names the variable that chooses the coordination store of
// every repository, over the store setting of config.json (docs/fleet.md).
const DatabaseURLEnv = "TASKIE_DATABASE_URL"

// CoordSettings say where a repository's coordination data live: the
// store and project settings of its config.
type CoordSettings struct {
	// Store is "" for the file store (the default) or a database URL
	// ("postgres://…"); TASKIE_DATABASE_URL, when set, wins.
	Store string
	// Project names the repository across its clones; "" is the origin
	// remote's URL, normalised. Only a shared store needs it.
	Project string
	// Clock is the caller's clock; file leases take its Lease clock (the
	// real one unless TASKIE_TEST_CLOCK=1). A database keeps its own.
	Clock clock.Clock
	// Ignored, when not "", says that the repository's own store setting
	// was left out (the user has not trusted it): OpenCoordination warns
	// once on stderr and uses the file store.
	Ignored string
}

// ignoredWarned keeps the warning about an ignored store to one per process.
var ignoredWarned sync.Once

// URL returns the database URL in force ("" for files) and where it came
// from: the variable or the setting.
func (s CoordSettings) URL() (u, source string) {
	if v := strings.TrimSpace(os.Getenv(DatabaseURLEnv)); v != "" {
		return v, DatabaseURLEnv
	}
	return strings.TrimSpace(s.Store), "store"
}

// CoordOpener opens a shared coordination store from its URL.
type CoordOpener func(ctx context.Context, url string) (Coordination, error)

var (
	openersMu sync.Mutex
	openers   = map[string]CoordOpener{}
)

// RegisterCoordination makes the stores whose URLs start with scheme://
// available to OpenCoordination. A store package registers itself when it
// is linked in (package postgres does), so that this package imports none.
func RegisterCoordination(scheme string, open CoordOpener) {
	openersMu.Lock()
	defer openersMu.Unlock()
	openers[strings.ToLower(scheme)] = open
}

// OpenCoordination opens the coordination store the settings name for the
// repository at repoRoot, and returns it with the project its plan keys
// carry. Files need no project (they belong to one clone) and get "". A
// database that cannot be reached is an error naming its URL without the
// password, within the store's connect timeout (≤ 3 s for PostgreSQL).
func OpenCoordination(ctx context.Context, repoRoot string, s CoordSettings) (Coordination, string, error) {
	raw, _ := s.URL()
	if raw == "" {
		if s.Ignored != "" {
			ignoredWarned.Do(func() { fmt.Fprintf(os.Stderr, "taskie: warning: %s; using this clone's files\n", s.Ignored) })
		}
		c, err := OpenFileCoord(repoRoot)
		if err != nil {
			return nil, "", err
		}
		lease := s.Clock.Lease()
		c.Clock = func() (time.Time, error) { return lease.Now(), nil }
		c.holds = true
		return c, "", nil
	}
	open, err := opener(raw)
	if err != nil {
		return nil, "", err
	}
	project, err := ProjectID(repoRoot, s.Project)
	if err != nil {
		return nil, "", err
	}
	c, err := open(ctx, raw)
	if err != nil {
		return nil, "", err
	}
	return c, project, nil
}

// opener finds the registered store of a URL's scheme.
func opener(raw string) (CoordOpener, error) {
	scheme, _, ok := strings.Cut(raw, "://")
	openersMu.Lock()
	open := openers[strings.ToLower(scheme)]
	openersMu.Unlock()
	switch {
	case !ok:
		return nil, fmt.Errorf("store %q: not a database URL like postgres://user@host/db", RedactURL(raw))
	case open == nil:
		return nil, fmt.Errorf("store %s: no coordination store for %q URLs in this taskie (PostgreSQL's are postgres://…)", RedactURL(raw), scheme)
	}
	return open, nil
}

// RedactURL returns a database URL fit for a message: its password, and
// the password or sslpassword of its query, replaced by xxxxx. A URL that
// does not parse is cut to its scheme, since its password cannot be found.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Opaque != "" || !strings.Contains(raw, "://") {
		scheme, _, _ := strings.Cut(raw, "://")
		if len(scheme) > 20 || strings.ContainsAny(scheme, "@:/ ") {
			return "(a URL that does not parse)"
		}
		return scheme + "://… (a URL that does not parse)"
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	if q := u.Query(); q.Has("password") || q.Has("sslpassword") {
		for _, k := range []string{"password", "sslpassword"} {
			if q.Has(k) {
				q.Set(k, "xxxxx")
			}
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// ProjectID returns the identity of the repository at repoRoot across its
// clones: configured when not "", else its origin remote's URL normalised
// (NormalizeRemote), so that every clone of one repository shares its
// plans' claims and two repositories never do.
func ProjectID(repoRoot, configured string) (string, error) {
	if p := strings.TrimSpace(configured); p != "" {
		return p, nil
	}
	origin, err := originURL(repoRoot)
	if err != nil {
		return "", err
	}
	id := NormalizeRemote(origin)
	if id == "" {
		return "", noProject(fmt.Sprintf("%s: the origin remote %q names no repository; set \"project\" in .taskie/config.json", repoRoot, origin))
	}
	return id, nil
}

// originURL runs `git config --get remote.origin.url` in dir.
func originURL(dir string) (string, error) {
	if u, ok := gitwt.OriginURL(dir); ok {
		return u, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	origin, err := gitwt.Run(ctx, dir, "config", "--get", "remote.origin.url")
	if err == nil && origin != "" {
		return origin, nil
	}
	if err != nil && gitwt.ExitCode(err) < 0 {
		return "", fmt.Errorf("%s: cannot run git to find the origin remote (%v); set \"project\" in .taskie/config.json", dir, err)
	}
	return "", noProject(fmt.Sprintf("%s: no origin remote to name the project by; add one (git remote add origin URL) or set \"project\" in .taskie/config.json, the same in every clone", dir))
}

// ErrNoProject matches the error of a repository the shared store cannot
// name: no usable origin remote and no "project" setting.
var ErrNoProject = errors.New("no project identity")

type noProject string

func (e noProject) Error() string        { return string(e) }
func (e noProject) Is(target error) bool { return target == ErrNoProject }

// NormalizeRemote turns a git remote URL into a repository identity: the
// host in lower case (without user, password or port) and the path without
// a final ".git" or slash. "https://u:pw@GitHub.com/Org/Repo.git",
// "git@github.com:Org/Repo.git" and "ssh://git@github.com:22/Org/Repo" are
// all "github.com/Org/Repo"; a local path stays a cleaned path.
func NormalizeRemote(remote string) string {
	r := strings.TrimSpace(remote)
	host, p := "", r
	switch {
	case strings.Contains(r, "://"):
		u, err := url.Parse(r)
		if err != nil {
			return ""
		}
		host, p = strings.ToLower(u.Hostname()), u.Path
	case scpLike(r):
		at := strings.LastIndex(r[:strings.Index(r, ":")], "@")
		hostPart, rest, _ := strings.Cut(r[at+1:], ":")
		host, p = strings.ToLower(hostPart), rest
	}
	p = strings.TrimSuffix(strings.TrimRight(p, "/"), ".git")
	if host == "" {
		if p == "" {
			return ""
		}
		return path.Clean(p)
	}
	p = strings.Trim(path.Clean("/"+p), "/")
	if p == "" {
		return host
	}
	return host + "/" + p
}

// scpLike reports whether r is git's scp-like form, [user@]host:path: a
// colon before any slash (and not a Windows drive letter).
func scpLike(r string) bool {
	colon := strings.Index(r, ":")
	slash := strings.Index(r, "/")
	return colon > 1 && (slash < 0 || colon < slash)
}

// ClaimEvent returns the coordination event that a claim decision logs in
// every store (nil for a renewal or a refusal), and whether the decision
// changes the stored claims. ttl and now are the claim's.
func ClaimEvent(p PlanKey, d domain.ClaimDecision, ttl time.Duration, now time.Time) (*events.Event, bool) {
	return claimEvent(p, d, ttl, now)
}
