package doctor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/taskie-dev/taskie/internal/config"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/store/postgres"
)

// storeChecks checks the shared store, when one is configured
// (TASKIE_DATABASE_URL, or a trusted "store" setting): the origin remote
// or project that names the repository in it, that the server answers
// within the connect timeout and lets this user in, the schema against
// this taskie's, and that this clone's plan events are all in it (read
// only: what `taskie store import` would add). Without one, a single line.
func storeChecks(e Env, repo *plan.Repo, cfg config.Config) (out []Check) {
	url, source := strings.TrimSpace(e.Getenv(store.DatabaseURLEnv)), store.DatabaseURLEnv
	if url == "" && !slices.Contains(cfg.Ignored, "store") {
		url, source = strings.TrimSpace(cfg.Store), "the store setting"
	}
	if url == "" {
		detail := "files (no server)"
		if slices.Contains(cfg.Ignored, "store") {
			detail += "; the repository's store setting is ignored until you trust it (see config trust)"
		}
		return []Check{{Name: "store", OK: true, Detail: detail}}
	}
	red := store.RedactURL(url)
	project, proj := "", []Check{}
	if repo != nil {
		var c Check
		project, c = projectCheck(repo, cfg)
		proj = append(proj, c)
	}
	// the origin remote comes last, after what the server says
	out = []Check{}
	defer func() { out = append(out, proj...) }()
	ctx := context.Background()
	db, err := postgres.Connect(ctx, url)
	if err != nil {
		return append(out, connectCheck(err, source))
	}
	defer db.Close()
	out = append(out, Check{Name: "store reachable", OK: true, Detail: fmt.Sprintf("%s (from %s)", red, source)},
		Check{Name: "store login", OK: true, Detail: "the server let this user in"})
	info, err := db.Status(ctx, project)
	if err != nil {
		return append(out, Check{Name: "store schema", Detail: err.Error(), Fix: "check the server's log; `taskie store status` shows what it answers"})
	}
	schema := schemaCheck(info)
	out = append(out, schema)
	if info.Schema == 0 || repo == nil || project == "" {
		return out
	}
	return append(out, importedCheck(ctx, e, repo, db, project))
}

// projectCheck names the repository in the shared store: the project
// setting, else the origin remote.
func projectCheck(repo *plan.Repo, cfg config.Config) (string, Check) {
	p, err := store.ProjectID(repo.Root, cfg.Project)
	if errors.Is(err, store.ErrNoProject) {
		return "", Check{Name: "store project", Detail: err.Error(),
			Fix: "add the origin remote (`git remote add origin URL`), or `taskie config set project github.com/org/repo` and `taskie trust` (the same name in every clone)"}
	}
	if err != nil {
		return "", Check{Name: "store project", Detail: err.Error(), Fix: "set \"project\" in .taskie/config.json"}
	}
	how := "from the origin remote"
	if strings.TrimSpace(cfg.Project) != "" {
		how = "the project setting"
	}
	return p, Check{Name: "store project", OK: true, Detail: p + " (" + how + ")"}
}

// connectCheck words a failed connection: a refused login (SQLSTATE class
// 28) is told from a server that cannot be reached.
func connectCheck(err error, source string) Check {
	msg := err.Error()
	if strings.Contains(msg, "SQLSTATE 28") {
		return Check{Name: "store login", Detail: msg,
			Fix: "check the user and its password: ~/.pgpass (or PGPASSFILE, PGPASSWORD), and the server's pg_hba.conf for this machine"}
	}
	return Check{Name: "store reachable", Detail: msg,
		Fix: fmt.Sprintf("check that the server runs and accepts connections from this machine (host, port, sslmode); the URL comes from %s", source)}
}

// schemaCheck compares the database's schema with this taskie's.
func schemaCheck(info postgres.Info) Check {
	c := Check{Name: "store schema"}
	switch {
	case info.Schema == 0:
		c.Detail = fmt.Sprintf("none yet (this taskie brings version %d)", info.Latest)
		c.Fix = "taskie store migrate   (once, from any machine)"
	case info.Schema < info.Latest:
		c.Detail = fmt.Sprintf("version %d, older than this taskie's %d", info.Schema, info.Latest)
		c.Fix = "taskie store migrate"
	case info.Schema > info.Latest:
		c.Detail = fmt.Sprintf("version %d, newer than this taskie's %d (another machine's taskie migrated it)", info.Schema, info.Latest)
		c.Fix = "upgrade taskie on this machine"
	default:
		c.OK, c.Detail = true, fmt.Sprintf("version %d, up to date (PostgreSQL %s)", info.Schema, info.ServerVersion)
	}
	return c
}

// importedCheck counts the events of this clone's plan logs that the
// database lacks, by the key `taskie store import` uses.
func importedCheck(ctx context.Context, e Env, repo *plan.Repo, db *postgres.Store, project string) Check {
	const name = "store history"
	ids, err := repo.Plans()
	if err != nil {
		return Check{Name: name, Detail: err.Error(), Fix: "check " + repo.PlansDir()}
	}
	fs, err := store.Open(repo, e.Clock)
	if err != nil {
		return Check{Name: name, Detail: err.Error()}
	}
	defer fs.Close()
	total, missing := 0, 0
	var behind []string
	for _, id := range ids {
		lines, err := fs.PlanLines(id)
		if err != nil {
			return Check{Name: name, Detail: fmt.Sprintf("plan %s: %v", id, err)}
		}
		if len(lines) == 0 {
			continue
		}
		have := map[string]bool{}
		err = db.ScanLog(ctx, store.PlanKey{Project: project, Plan: id}, store.LogQuery{}, func(line []byte) error {
			have[store.EventKey(line)] = true
			return nil
		})
		if err != nil {
			return Check{Name: name, Detail: err.Error(), Fix: "`taskie store status` shows what the server answers"}
		}
		n := 0
		for _, l := range lines {
			if !have[store.EventKey(l)] {
				n++
			}
		}
		total += len(lines)
		if n > 0 {
			missing += n
			behind = append(behind, fmt.Sprintf("%s (%d of %d)", id, n, len(lines)))
		}
	}
	if missing > 0 {
		return Check{Name: name, Detail: fmt.Sprintf("%d of this clone's %d plan events are not in the database: plan %s", missing, total, strings.Join(behind, ", plan ")),
			Fix: "taskie store import   (adds only the events the database lacks)"}
	}
	return Check{Name: name, OK: true, Detail: fmt.Sprintf("this clone's %d plan events are all in the database", total)}
}
