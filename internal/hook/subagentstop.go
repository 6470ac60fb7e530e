package hook

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/taskie-dev/taskie/internal/config"
	"github.com/taskie-dev/taskie/internal/fsafe"
	"github.com/taskie-dev/taskie/internal/gitwt"
	"github.com/taskie-dev/taskie/internal/parallel"
	"github.com/taskie-dev/taskie/internal/planchoice"
	"github.com/taskie-dev/taskie/internal/store"
)

// SubagentStop is the SubagentStop hook (docs/parallel.md#the-subagent-gate): a subagent that holds
// a claim and stops while its task's worktree has no commit since the
// claim is blocked once, told to commit or release; its next stop is
// allowed with a message (loop safety, as in docs/hook.md). Anything else — no
// claim, a new commit, a paused plan, bad input, an internal error — is
// allowed. Output as for the Stop hook: exit 2 and the reason on stderr,
// or {"decision":"block",…} with output_format json.
//
// Which claims are the subagent's: Claude Code gives the hook the
// subagent's agent_id, which the subagent itself cannot read, so a claim
// is the subagent's when its agent name is that agent_id, or a name the
// subagent's own transcript (agent_transcript_path) passes to taskie:
// `taskie … --as NAME` or `TASKIE_AGENT=NAME`. The fan-out action gives
// each subagent its name in its prompt, so both the prompt and the
// subagent's commands carry it. The worktree checked is the one recorded
// for the claimed task.
func SubagentStop(e Env) int {
	format := e.Format
	res := func() (res Result) {
		defer func() {
			if r := recover(); r != nil {
				fmt.Fprintf(e.Stderr, "taskie: internal error: %v\n%s", r, debug.Stack())
				res = Allow(fmt.Sprintf("taskie: internal error in the SubagentStop hook (%v); the stop was allowed", r))
			}
		}()
		return subagentStop(e, &format)
	}()
	if format != FormatJSON {
		format = FormatExit2
	}
	return res.Write(e.Stdout, e.Stderr, format)
}

// subagentInput is what SubagentStop's input adds to a Stop's.
type subagentInput struct {
	AgentID             string `json:"agent_id"`
	AgentType           string `json:"agent_type"`
	AgentTranscriptPath string `json:"agent_transcript_path"`
}

// readSubagentInput reads the hook input and its subagent fields.
func readSubagentInput(e Env) (Input, subagentInput, error) {
	var raw bytes.Buffer
	in, err := ReadInput(io.TeeReader(e.Stdin, &raw), e.InputDeadline)
	if err != nil {
		return in, subagentInput{}, err // raw may still be written to: never read it
	}
	var sub subagentInput
	_ = json.NewDecoder(&raw).Decode(&sub)
	return in, sub, nil
}

// heldClaim is a live claim of the subagent, and where it is.
type heldClaim struct {
	plan  string
	claim parallel.Claim
}

func subagentStop(e Env, format *string) Result {
	if e.Getenv("TASKIE_HOOK_SKIP") != "" {
		return Allow("")
	}
	in, sub, err := readSubagentInput(e)
	if err != nil {
		return warnAllow(e, err.Error()+"; subagent stop allowed")
	}
	if st, err := os.Stat(in.Cwd); in.Cwd == "" || err != nil || !st.IsDir() {
		return Allow("") // nothing to check against; the Stop hook reports bad input
	}
	repo, ok := findRepo("subagent-stop", in.Cwd)
	if !ok {
		return Allow("") // not a taskie project
	}
	cfg, cfgErr := config.Load(repo.TaskieDir())
	if cfgErr == nil && *format == "" {
		*format = cfg.OutputFormat
	}
	names := subagentNames(sub)
	if len(names) == 0 {
		return Allow("")
	}
	fs, err := store.Open(repo, e.Clock)
	if err != nil {
		return warnAllow(e, err.Error())
	}
	defer fs.Close()
	// One deadline for the whole coordination path — connect, schema
	// check, clock, every plan's claims — so that a server that accepts
	// the connection and then goes silent never holds the agent up.
	ctx, cancel := context.WithTimeout(context.Background(), CoordDeadline)
	defer cancel()
	coord, project, err := store.OpenCoordination(ctx, repo.Root, store.CoordSettings{Store: cfg.Store, Project: cfg.Project, Clock: e.Clock})
	if err != nil {
		return warnAllow(e, err.Error()+"; subagent stop allowed")
	}
	defer coord.Close()
	held, err := heldClaims(ctx, fs, coord, project, names)
	if err != nil {
		return warnAllow(e, err.Error()+"; subagent stop allowed")
	}
	if len(held) == 0 {
		return Allow("")
	}
	files, ok := coord.(*store.FileCoord)
	if !ok {
		if files, err = store.OpenFileCoord(repo.Root); err != nil {
			return warnAllow(e, err.Error()+"; subagent stop allowed")
		}
		defer files.Close()
	}
	g := &gate{e: e, in: in, sub: sub, root: fs.Root(), files: files}
	return g.decide(held)
}

// transcriptNames finds the agent names a subagent's transcript gives
// taskie: `taskie … --as NAME` and `TASKIE_AGENT=NAME` (quotes escaped
// inside the JSON lines or not).
// It is compiled on first use: the hook's start-up stays cheap.
var transcriptNames = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`taskie\b[^\n]{0,300}?--as[= ]+(?:\\?["'])?([A-Za-z0-9._@:/+-]+)|TASKIE_AGENT=(?:\\?["'])?([A-Za-z0-9._@:/+-]+)`)
})

// transcriptLimit is how much of a subagent's transcript is scanned (its
// end: a long transcript's first lines are the prompt, also named later).
const transcriptLimit = 4 << 20

// subagentNames lists the names a subagent's claims may carry: its
// agent_id, then the names its transcript gives taskie.
func subagentNames(sub subagentInput) []string {
	var names []string
	if sub.AgentID != "" {
		names = append(names, sub.AgentID)
	}
	if sub.AgentTranscriptPath == "" {
		return names
	}
	data, err := planchoice.ReadTail(sub.AgentTranscriptPath, transcriptLimit)
	if err != nil {
		return names
	}
	for _, m := range transcriptNames().FindAllSubmatch(data, -1) {
		name := string(m[1])
		if name == "" {
			name = string(m[2])
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

// CoordDeadline bounds the subagent gate's whole use of the coordination
// store: a stop is never held up longer, whatever the database does.
var CoordDeadline = 3 * time.Second

// heldClaims lists the live claims held under any of names, on plans that
// are not paused. A store that runs out of time is an error: the caller
// allows the stop with it; a plan whose claims cannot be read is skipped.
func heldClaims(ctx context.Context, fs *store.Files, coord store.Coordination, project string, names []string) ([]heldClaim, error) {
	ids, err := fs.Repo.Plans()
	if err != nil {
		return nil, nil
	}
	now, err := coord.Now(ctx)
	if err != nil && ctx.Err() != nil {
		return nil, err
	} else if err != nil {
		now = time.Now()
	}
	var out []heldClaim
	for _, id := range ids {
		if st, err := fs.PeekState(id); err == nil && !st.IsEnabled() {
			continue // paused: all automation stops, this gate included
		}
		claims, err := coord.Claims(ctx, store.PlanKey{Project: project, Plan: id})
		if err != nil && ctx.Err() != nil {
			return nil, err // out of time: the other plans would fail too
		} else if err != nil {
			continue
		}
		for _, c := range claims {
			if c.Live(now) && slices.Contains(names, c.Agent) {
				out = append(out, heldClaim{plan: id, claim: c})
			}
		}
	}
	return out, nil
}

// gate decides one subagent stop.
type gate struct {
	e     Env
	in    Input
	sub   subagentInput
	root  *fsafe.Root
	files *store.FileCoord // the worktree record
}

// decide checks every claim the subagent holds: the first without a new
// commit blocks (once); otherwise the stop is allowed with any message.
func (g *gate) decide(held []heldClaim) Result {
	mem := loadGateMemory(g.root, g.memoryID())
	var msgs []string
	for _, h := range held {
		base, head := g.commits(h)
		key := h.plan + "/" + h.claim.Task.String()
		d := parallel.SubagentStop(&h.claim, base, head, mem.Blocked[key] != "")
		lg := openLog(g.root, h.plan)
		if d.Block {
			mem.Blocked[key] = head
			if err := mem.save(); err != nil {
				lg.info("subagent-stop", "agent", g.sub.AgentID, "task", key, "decision", "allow", "why", "memory not saved: "+err.Error())
				lg.close()
				return warnAllow(g.e, fmt.Sprintf("could not save the subagent gate's memory (%v), so this block became a message: %s", err, firstLine(d.Message)))
			}
			lg.info("subagent-stop", "agent", g.sub.AgentID, "claim", h.claim.Agent, "task", key, "decision", "block", "why", "no commit since the claim")
			lg.close()
			return Result{Block: true, Reason: d.Message}
		}
		lg.info("subagent-stop", "agent", g.sub.AgentID, "claim", h.claim.Agent, "task", key, "decision", "allow", "why", gateWhy(d))
		lg.close()
		if d.Message != "" {
			msgs = append(msgs, d.Message)
		}
	}
	if len(msgs) == 0 {
		return Allow("")
	}
	return Allow(joinLines(msgs))
}

func gateWhy(d parallel.GateDecision) string {
	if d.Message == "" {
		return "new commit since the claim"
	}
	return firstLine(d.Message)
}

func joinLines(ss []string) string {
	var b bytes.Buffer
	for i, s := range ss {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s)
	}
	return b.String()
}

// commits returns the commit the claim started from (its worktree's
// last_commit, else the HEAD of the checkout it was claimed from) and that
// worktree's or checkout's HEAD now; "" when unknown.
func (g *gate) commits(h heldClaim) (base, head string) {
	dir, since, ok, err := g.files.ClaimBase(store.PlanKey{Plan: h.plan}, h.claim.Task)
	if err != nil || !ok {
		return "", ""
	}
	head, _ = gitwt.Head(dir)
	return since, head
}

// memoryID identifies the subagent for its memory: its agent_id, else
// its session and transcript.
func (g *gate) memoryID() string {
	id := g.sub.AgentID
	if id == "" {
		id = g.in.SessionID + "|" + g.sub.AgentTranscriptPath
	}
	return id
}

// gateMemory remembers, per subagent, the claims it was blocked on, so
// that it is blocked once only.
type gateMemory struct {
	AgentID string            `json:"agent_id"`
	Blocked map[string]string `json:"blocked"` // plan/task → HEAD at the block
	Saved   time.Time         `json:"saved"`

	root *fsafe.Root
	rel  string
}

func loadGateMemory(root *fsafe.Root, id string) *gateMemory {
	sum := sha256.Sum256([]byte(id))
	m := &gateMemory{AgentID: id, root: root, rel: path.Join(sessionsDir, "subagent-"+hex.EncodeToString(sum[:8])+".json")}
	if data, err := root.ReadFileLimit(m.rel, 1<<20); err == nil {
		_ = json.Unmarshal(data, m)
	}
	if m.Blocked == nil {
		m.Blocked = map[string]string{}
	}
	return m
}

func (m *gateMemory) save() error {
	if err := m.root.MkdirAll(sessionsDir, 0o755); err != nil {
		return err
	}
	_, _ = m.root.CleanTemps(sessionsDir, time.Minute)
	m.Saved = time.Now().UTC()
	data, _ := json.MarshalIndent(m, "", "  ")
	return m.root.WriteFile(m.rel, append(data, '\n'), false)
}
