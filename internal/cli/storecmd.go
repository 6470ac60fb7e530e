package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/config"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/store/postgres"
)

// storeOpts are the options of `taskie store migrate` and `taskie store
// status`.
type storeOpts struct {
	s      *Streams
	g      *globals
	asJSON bool
}

func newStoreCmd(s *Streams, g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "store",
		Short: "The shared coordination store on PostgreSQL, for a fleet of clones",
		Long: `Claims, leases and coordination events live in files of the clone by default.
With store: "postgres://…" in .taskie/config.json (or TASKIE_DATABASE_URL) they
live in PostgreSQL, shared by every clone and machine; plan files keep
travelling through git. ` + "`taskie help fleet`" + ` walks a team through it.`,
	}
	c.AddCommand(newStoreMigrateCmd(s, g), newStoreStatusCmd(s, g),
		newStoreCopyCmd(s, g, true), newStoreCopyCmd(s, g, false))
	return c
}

func newStoreMigrateCmd(s *Streams, g *globals) *cobra.Command {
	return newStoreMigrateCmdWith(s, g, runStoreMigrate)
}

func newStoreMigrateCmdWith(s *Streams, g *globals, run func(*storeOpts) error) *cobra.Command {
	o := &storeOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "migrate",
		Short: "Create or upgrade the database's schema",
		Long: `Apply the schema migrations built into taskie that the database lacks, in one
transaction. Safe to run again, and from several machines at once.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error { return run(o) },
	}
	c.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")
	return c
}

func newStoreStatusCmd(s *Streams, g *globals) *cobra.Command {
	return newStoreStatusCmdWith(s, g, runStoreStatus)
}

func newStoreStatusCmdWith(s *Streams, g *globals, run func(*storeOpts) error) *cobra.Command {
	o := &storeOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "status",
		Short: "Show the store: where it is, the connection, the schema version, the counts",
		Long: `Show where this repository's coordination data live. For PostgreSQL: the URL
(without its password), the server, the schema version against this taskie's,
the project the plans are keyed by, and the claims and events stored. Exit 1
when the database cannot be reached or has no schema yet.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error { return run(o) },
	}
	c.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")
	return c
}

// storeCopyOpts are the options of `taskie store import` (in) and `taskie
// store export`.
type storeCopyOpts struct {
	s       *Streams
	g       *globals
	in      bool
	plan    string
	replace bool
	asJSON  bool
}

func newStoreCopyCmd(s *Streams, g *globals, in bool) *cobra.Command {
	return newStoreCopyCmdWith(s, g, in, runStoreCopy)
}

func newStoreCopyCmdWith(s *Streams, g *globals, in bool, run func(*storeCopyOpts) error) *cobra.Command {
	o := &storeCopyOpts{s: s, g: g, in: in}
	c := &cobra.Command{
		Use:   "import [plan]",
		Short: "Copy a plan's claims and coordination events from the files into PostgreSQL",
		Long: `Copy the claims (live and expired) and the coordination events of a plan, or of
every plan of the repository, from the clone's files into the database, as they
are. A plan the database already holds data for is refused unless --replace.
The files are left as they were.`,
		Args: maxArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			o.plan = firstArg(args)
			return run(o)
		},
	}
	if !in {
		c.Use = "export [plan]"
		c.Short = "Copy a plan's claims and coordination events from PostgreSQL into the files"
		c.Long = `Copy the claims (live and expired) and the coordination events of a plan, or of
every plan of this project in the database, into the clone's files, in the
file store's own format. Plans whose files already hold data are refused
unless --replace. The database is left as it was.`
	}
	c.Flags().BoolVar(&o.replace, "replace", false, "replace the data already at the destination")
	c.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")
	return c
}

// coordSettings reads the store and project settings of the repository
// whose .taskie directory is taskieDir. A config with problems still gives
// its valid values: the problem is reported where it belongs (`taskie
// config`), not here.
func coordSettings(taskieDir string) store.CoordSettings {
	cfg, _ := config.Load(taskieDir)
	s := store.CoordSettings{Store: cfg.Store, Project: cfg.Project}
	if slices.Contains(cfg.Ignored, "store") {
		s.Ignored = cfg.IgnoredMessage()
	}
	return s
}

// storeTarget is the repository and the database `taskie store` acts on.
type storeTarget struct {
	repo     *plan.Repo
	settings store.CoordSettings
	url      string // "" for files
	source   string // DatabaseURLEnv or "store"
}

// storeTarget finds the repository and its store. Only migrate may run
// outside a repository, on the database TASKIE_DATABASE_URL names.
func (g *globals) storeTarget(repoOptional bool) (*storeTarget, error) {
	r, err := g.repo()
	if err != nil {
		t := &storeTarget{}
		if t.url, t.source = t.settings.URL(); repoOptional && t.url != "" {
			return t, nil
		}
		return nil, err
	}
	t := &storeTarget{repo: r, settings: coordSettings(r.TaskieDir())}
	t.url, t.source = t.settings.URL()
	return t, nil
}

// needDB refuses a command that needs a database when the store is files.
func (t *storeTarget) needDB(what string) error {
	if t.url != "" {
		return nil
	}
	return usageErr(fmt.Errorf("%s: the coordination store is files, not a database", what),
		`set "store": "postgres://user@host/db" in .taskie/config.json or export `+store.DatabaseURLEnv+" (`taskie help fleet`)")
}

// dbErr gives a database error its hint.
func dbErr(err error) error {
	switch {
	case errors.Is(err, postgres.ErrNoSchema):
		return &exitError{code: ExitProblems, err: err, hint: "run `taskie store migrate` once, from any machine"}
	case errors.Is(err, postgres.ErrSchemaNewer):
		return &exitError{code: ExitProblems, err: err, hint: "a newer taskie migrated this database: upgrade taskie on this machine"}
	case errors.Is(err, store.ErrNoProject):
		// Not the server: the repository has no name to share claims under.
		return &exitError{code: ExitUsage, err: err, hint: "the shared store names a repository by its origin remote: add one (`git remote add origin URL`), or run `taskie config set project github.com/org/repo` and `taskie trust` (the same name in every clone)"}
	case errors.Is(err, postgres.ErrConnLost):
		return &exitError{code: ExitProblems, err: err, hint: "the transaction in flight was rolled back: nothing half-done is left; run the same command again once the server answers"}
	}
	return &exitError{code: ExitProblems, err: err,
		hint: "check that the server runs and accepts this URL (store in .taskie/config.json, or " + store.DatabaseURLEnv + ")"}
}

// storeFailure makes a failure of the coordination database that reached
// the top of any command (a lost connection, an error the server
// answered) exit 1 with dbErr's hint: it is not bad usage (exit 2).
func storeFailure(err error) error {
	var ee *exitError
	if errors.As(err, &ee) && ee.code != ExitUsage {
		return err
	}
	if !postgres.IsFailure(err) {
		return err
	}
	return dbErr(err)
}

func runStoreMigrate(o *storeOpts) error {
	t, err := o.g.storeTarget(true)
	if err != nil {
		return err
	}
	if err := t.needDB("store migrate"); err != nil {
		return err
	}
	ctx := context.Background()
	db, err := postgres.Connect(ctx, t.url)
	if err != nil {
		return dbErr(err)
	}
	defer db.Close()
	from, to, err := db.Migrate(ctx)
	if err != nil {
		return dbErr(err)
	}
	if o.asJSON {
		return writeJSON(o.s.Out, map[string]any{"url": db.URL(), "from": from, "to": to})
	}
	if from == to {
		fmt.Fprintf(o.s.Err, "%s: schema at version %d, up to date\n", db.URL(), to)
	} else {
		fmt.Fprintf(o.s.Err, "%s: schema migrated from version %d to %d\n", db.URL(), from, to)
	}
	return nil
}

// storeStatusView is `taskie store status --json`.
type storeStatusView struct {
	Store     string           `json:"store"` // "files" or "postgres"
	URL       string           `json:"url,omitempty"`
	Source    string           `json:"source,omitempty"`
	Dir       string           `json:"dir,omitempty"`
	Project   string           `json:"project,omitempty"`
	Connected bool             `json:"connected"`
	Error     string           `json:"error,omitempty"`
	Info      *postgres.Info   `json:"database,omitempty"`
	Plans     []planCoordCount `json:"plans"`
}

// planCoordCount counts one plan's coordination data.
type planCoordCount struct {
	Plan       string `json:"plan"`
	Claims     int    `json:"claims"`
	LiveClaims int    `json:"live_claims"`
	Events     int    `json:"events"`
	// PlanEvents counts the plan's own events every clone shared (a
	// database only).
	PlanEvents *int `json:"plan_events,omitempty"`
}

func runStoreStatus(o *storeOpts) error {
	t, err := o.g.storeTarget(false)
	if err != nil {
		return err
	}
	ctx := context.Background()
	v := storeStatusView{Store: "files", Plans: []planCoordCount{}}
	var c store.Coordination
	var project string
	if t.url == "" {
		fc, err := store.OpenFileCoord(t.repo.Root)
		if err != nil {
			return err
		}
		v.Dir, v.Connected, c = fc.Dir(store.PlanKey{}), true, fc
	} else {
		v.Store, v.URL, v.Source = "postgres", store.RedactURL(t.url), t.source
		if v.Project, err = store.ProjectID(t.repo.Root, t.settings.Project); err != nil {
			return usageErr(err, "")
		}
		if err := pgInfo(ctx, t.url, &v); err != nil {
			return o.printStoreStatus(v, err)
		}
		if c, project, err = store.OpenCoordination(ctx, t.repo.Root, t.settings); err != nil {
			return dbErr(err)
		}
	}
	defer c.Close()
	v.Plans, err = countPlans(ctx, c, t.repo, project)
	if err != nil {
		return err
	}
	return o.printStoreStatus(v, nil)
}

// pgInfo fills in the database's side of the status: connection, server,
// schema version and counts. No schema yet is a problem (exit 1).
func pgInfo(ctx context.Context, url string, v *storeStatusView) error {
	db, err := postgres.Connect(ctx, url)
	if err != nil {
		v.Error = err.Error()
		return dbErr(err)
	}
	defer db.Close()
	v.Connected = true
	info, err := db.Status(ctx, v.Project)
	if err != nil {
		v.Error = err.Error()
		return dbErr(err)
	}
	v.Info = &info
	if info.Schema == 0 {
		v.Error = postgres.ErrNoSchema.Error()
		return dbErr(fmt.Errorf("%s: %w", db.URL(), postgres.ErrNoSchema))
	}
	return nil
}

// countPlans counts the coordination data of every plan of the repository.
func countPlans(ctx context.Context, c store.Coordination, r *plan.Repo, project string) ([]planCoordCount, error) {
	ids, err := r.Plans()
	if err != nil {
		return nil, err
	}
	now, err := c.Now(ctx)
	if err != nil {
		return nil, err
	}
	out := []planCoordCount{}
	for _, id := range ids {
		d, err := store.ReadPlan(ctx, c, store.PlanKey{Project: project, Plan: id})
		if err != nil {
			return nil, err
		}
		pc := planCoordCount{Plan: id, Claims: len(d.Claims), Events: len(d.Events)}
		if pg, ok := c.(*postgres.Store); ok {
			n, err := pg.PlanEvents(ctx, store.PlanKey{Project: project, Plan: id})
			if err != nil {
				return nil, err
			}
			pc.PlanEvents = &n
		}
		for _, cl := range d.Claims {
			if cl.Live(now) {
				pc.LiveClaims++
			}
		}
		out = append(out, pc)
	}
	return out, nil
}

// printStoreStatus prints the status (JSON on stdout, or lines on stdout)
// and returns err, the status's own verdict.
func (o *storeOpts) printStoreStatus(v storeStatusView, err error) error {
	if o.asJSON {
		if werr := writeJSON(o.s.Out, v); werr != nil {
			return werr
		}
		if err != nil {
			fmt.Fprintf(o.s.Err, "taskie: error: %v\n", err)
			return &exitError{code: ExitProblems, err: errSilent}
		}
		return nil
	}
	w := o.s.Out
	if v.Store == "files" {
		fmt.Fprintf(w, "store:    files in %s (this clone only)\n", v.Dir)
	} else {
		fmt.Fprintf(w, "store:    PostgreSQL %s (from %s)\n", v.URL, v.Source)
		fmt.Fprintf(w, "project:  %s\n", v.Project)
		printDBStatus(w, v)
	}
	for _, p := range v.Plans {
		shared := ""
		if p.PlanEvents != nil {
			shared = fmt.Sprintf(", %d plan events", *p.PlanEvents)
		}
		fmt.Fprintf(w, "plan %s: %d claims (%d live), %d events%s\n", p.Plan, p.Claims, p.LiveClaims, p.Events, shared)
	}
	return err
}

func printDBStatus(w io.Writer, v storeStatusView) {
	if !v.Connected {
		fmt.Fprintf(w, "connection: failed\n")
		return
	}
	i := v.Info
	if i == nil {
		return
	}
	fmt.Fprintf(w, "connection: ok, PostgreSQL %s, %s round trip\n", i.ServerVersion, i.RoundTrip.Round(10*time.Microsecond))
	switch {
	case i.Schema == 0:
		fmt.Fprintf(w, "schema:   none (this taskie brings version %d)\n", i.Latest)
		return
	case i.Schema < i.Latest:
		fmt.Fprintf(w, "schema:   version %d, this taskie brings %d: run `taskie store migrate`\n", i.Schema, i.Latest)
	case i.Schema > i.Latest:
		fmt.Fprintf(w, "schema:   version %d, newer than this taskie's %d (migrations only add: it still works)\n", i.Schema, i.Latest)
	default:
		fmt.Fprintf(w, "schema:   version %d, up to date\n", i.Schema)
	}
	fmt.Fprintf(w, "database: %d projects, %d plans, %d claims (%d live), %d events\n",
		i.All.Projects, i.All.Plans, i.All.Claims, i.All.LiveClaims, i.All.Events)
	fmt.Fprintf(w, "this project: %d plans, %d claims (%d live), %d events\n",
		i.Project.Plans, i.Project.Claims, i.Project.LiveClaims, i.Project.Events)
}

// copyView is one plan moved by import or export.
type copyView struct {
	Plan   string `json:"plan"`
	Claims int    `json:"claims"`
	Events int    `json:"events"`
	// PlanEvents counts the plan's own events read from the source;
	// PlanEventsAdded those the destination did not hold yet (import adds
	// only those; export writes them all).
	PlanEvents      int `json:"plan_events"`
	PlanEventsAdded int `json:"plan_events_added"`
}

// runStoreCopy copies plans' coordination data into the database (in) or
// out of it into the files.
func runStoreCopy(o *storeCopyOpts) error {
	in := o.in
	verb := map[bool]string{true: "import", false: "export"}[in]
	t, err := o.g.storeTarget(false)
	if err != nil {
		return err
	}
	if err := t.needDB("store " + verb); err != nil {
		return err
	}
	ctx := context.Background()
	db, project, err := store.OpenCoordination(ctx, t.repo.Root, t.settings)
	if err != nil {
		return dbErr(err)
	}
	defer db.Close()
	files, err := store.OpenFileCoord(t.repo.Root)
	if err != nil {
		return err
	}
	defer files.Close()
	log, ok := db.(store.PlanLog)
	if !ok {
		return fmt.Errorf("%s: this store does not keep plan events", store.RedactURL(t.url))
	}
	pf, err := store.Open(t.repo, o.g.clock())
	if err != nil {
		return err
	}
	pf.Mirror = nil // export must not mirror anything back
	defer pf.Close()
	from, to := store.Coordination(files), db
	if !in {
		from, to = db, files
	}
	ids, err := copyPlans(ctx, o.plan, t.repo, db, project, in)
	if err != nil {
		return err
	}
	out := []copyView{}
	for _, id := range ids {
		key := store.PlanKey{Project: project, Plan: id}
		// The plan's own events first: merged by identity, never refused.
		read, added, err := copyPlanEvents(ctx, in, pf, files, log, key)
		if err != nil {
			return err
		}
		d, err := store.CopyPlan(ctx, from, key, to, key, o.replace)
		if errors.Is(err, store.ErrNotEmpty) {
			return &exitError{code: ExitProblems, err: err, hint: "--replace overwrites it; `taskie store status` shows what is where"}
		}
		if err != nil {
			return dbErr(err)
		}
		if o.plan == "" && d.Empty() && read == 0 {
			continue
		}
		out = append(out, copyView{Plan: id, Claims: len(d.Claims), Events: len(d.Events), PlanEvents: read, PlanEventsAdded: added})
		if !o.asJSON {
			where := map[bool]string{true: "files → " + store.RedactURL(t.url), false: store.RedactURL(t.url) + " → files"}[in]
			what := fmt.Sprintf("%d of %d plan events added", added, read)
			if !in {
				what = fmt.Sprintf("%d plan events written to %s", read, underRoot(t.repo.Root, files.SharedLogPath(key)))
			}
			fmt.Fprintf(o.s.Err, "plan %s: %d claims, %d events copied (%s); %s\n", id, len(d.Claims), len(d.Events), where, what)
		}
	}
	if o.asJSON {
		return writeJSON(o.s.Out, out)
	}
	if len(out) == 0 {
		fmt.Fprintf(o.s.Err, "no plan has coordination data to %s\n", verb)
	}
	return nil
}

// copyPlanEvents moves a plan's own events. Import adds to the database
// the lines of the plan's events.jsonl, and of the shared log an earlier
// export wrote, that it lacks (by store.EventKey: a re-run, or a line that
// reached the database from another clone, adds nothing). Export writes
// every clone's plan events, as the database holds them, to the shared log
// file of the coordination directory: the plan's events.jsonl is this
// clone's record of its state.json and never gets another clone's lines.
// It returns how many events were read and how many the destination lacked.
func copyPlanEvents(ctx context.Context, in bool, pf *store.Files, files *store.FileCoord, log store.PlanLog, key store.PlanKey) (read, added int, err error) {
	if in {
		lines, err := pf.PlanLines(key.Plan)
		if err != nil {
			return 0, 0, err
		}
		shared, err := files.SharedLines(key)
		if err != nil {
			return 0, 0, err
		}
		// The shared log first: it holds every clone's events in the
		// database's order; this clone's newer lines follow.
		// Each log is keyed on its own: a line of both is one event.
		keys := append(store.PlanKeys(shared), store.PlanKeys(lines)...)
		lines = append(shared, lines...)
		if len(lines) == 0 {
			return 0, 0, nil
		}
		added, err := log.AppendPlanLines(ctx, key, lines, keys)
		if err != nil {
			return 0, 0, dbErr(err)
		}
		return len(lines), added, nil
	}
	var lines [][]byte
	err = log.ScanLog(ctx, key, store.LogQuery{}, func(line []byte) error {
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		return 0, 0, dbErr(err)
	}
	old, err := files.SharedLines(key)
	if err != nil {
		return 0, 0, err
	}
	if len(lines) == 0 && len(old) == 0 {
		return 0, 0, nil
	}
	seen := map[string]bool{}
	for _, l := range old {
		seen[store.EventKey(l)] = true
	}
	for _, l := range lines {
		if !seen[store.EventKey(l)] {
			added++
		}
	}
	return len(lines), added, files.WriteSharedLog(ctx, key, lines)
}

// copyPlans names the plans to copy: the one given, else every plan of
// the repository (import) or every plan of the project in the database
// (export).
func copyPlans(ctx context.Context, id string, r *plan.Repo, db store.Coordination, project string, in bool) ([]string, error) {
	if id != "" {
		if err := plan.ValidID(id); err != nil {
			return nil, usageErr(err, "")
		}
		return []string{id}, nil
	}
	if in {
		return r.Plans()
	}
	pg, ok := db.(*postgres.Store)
	if !ok {
		return r.Plans()
	}
	ids, err := pg.Plans(ctx, project)
	if err != nil {
		return nil, dbErr(err)
	}
	return ids, nil
}

// watchWake returns a channel that receives a value whenever another
// machine changes the plan's claims, when the store is PostgreSQL (LISTEN);
// nil otherwise, or when the database cannot be listened to: the watcher
// then polls alone.
func watchWake(ctx context.Context, p *store.Plan) <-chan struct{} {
	settings := coordSettings(p.Repo.TaskieDir())
	if u, _ := settings.URL(); u == "" {
		return nil
	}
	c, proj, err := store.OpenCoordination(ctx, p.Repo.Root, settings)
	if err != nil {
		return nil
	}
	w, ok := c.(interface {
		Watch(context.Context, store.PlanKey) (<-chan struct{}, error)
	})
	if !ok {
		c.Close()
		return nil
	}
	ch, err := w.Watch(ctx, store.PlanKey{Project: proj, Plan: p.ID})
	c.Close()
	if err != nil {
		return nil
	}
	return ch
}

// underRoot shows path relative to root when it is inside it.
func underRoot(root, path string) string {
	if rel, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}
