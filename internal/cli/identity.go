package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/gitwt"
	"github.com/taskie-dev/taskie/internal/parallel"
	"github.com/taskie-dev/taskie/internal/store"
)

// Identity and fencing (docs/parallel.md, "Identity and fencing"): a
// runner's place is its machine, clone and worktree; its default agent
// name is the place and the harness's session. A claim records both, and
// its fencing token.

// tokenEnv names the fencing token a command presents when --token is not
// given.
const tokenEnv = "TASKIE_CLAIM_TOKEN"

// sessionEnvs name the harness's session, in order: Claude Code's, Codex's.
var sessionEnvs = []string{"CLAUDE_SESSION_ID", "CODEX_THREAD_ID"}

// placeOf is where a command for the repository at root runs:
// "<host>:<clone>:<worktree>". The clone is its main checkout's directory
// name and a short hash of its git common directory (two clones of one
// name differ); the worktree is "." for the main checkout, else the
// linked worktree's directory name: the checkout the command was pointed
// at (-C, else the one it runs in; in a linked worktree the plan is the
// main checkout's, the place the worktree's), so a subagent that runs
// `taskie -C <main checkout>` from its worktree acts from the main
// checkout's place, as its orchestrator does.
func placeOf(root string) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	host, _, _ = strings.Cut(host, ".")
	l, err := gitwt.Discover(root)
	if err != nil {
		abs, _ := filepath.Abs(root)
		return parallel.PlaceOf(host, filepath.Base(abs)+"-"+shortHash(abs), ".")
	}
	if commandDir != "" {
		if here, err := gitwt.Discover(commandDir); err == nil && sameDir(here.CommonDir, l.CommonDir) {
			l = here
		}
	}
	common, _ := filepath.Abs(l.CommonDir)
	clone := filepath.Base(filepath.Dir(common))
	if filepath.Base(common) != ".git" { // a bare or unusual layout
		clone = filepath.Base(common)
	}
	wt := "."
	if l.Linked {
		wt = filepath.Base(l.Toplevel)
	}
	return parallel.PlaceOf(host, clone+"-"+shortHash(common), wt)
}

// commandDir is the directory the command was pointed at (-C, else the
// working directory), set when its repository is located.
var commandDir string

func sameDir(a, b string) bool {
	a, _ = filepath.Abs(a)
	b, _ = filepath.Abs(b)
	return filepath.Clean(a) == filepath.Clean(b)
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:3])
}

// session is the harness's session id, "" outside one.
func session() string {
	for _, e := range sessionEnvs {
		if v := strings.TrimSpace(os.Getenv(e)); v != "" {
			return v
		}
	}
	return ""
}

// defaultAgent is the agent name of a command given none: its place and
// session.
func defaultAgent(root string) string { return parallel.Identity(placeOf(root), session()) }

// agentOrDefault is --as, else $TASKIE_AGENT, else the default identity
// of the runner at root; checked.
func agentOrDefault(flag, root string) (string, error) {
	if strings.TrimSpace(flag) == "" && strings.TrimSpace(os.Getenv(agentEnv)) == "" {
		return defaultAgent(root), nil
	}
	return agentName(flag)
}

// fenceOf is what a command of agent presents for its claim on task: its
// place and its token — --token, else $TASKIE_CLAIM_TOKEN, else the token
// this clone recorded when agent was granted the claim from this place.
// No token at all (a claim made elsewhere, or before tokens) is fenced by
// name and place only.
func (cp *coordPlan) fenceOf(task domain.TaskID, agent string, flag int64) (domain.Fence, error) {
	f := domain.Fence{Place: placeOf(cp.p.Repo.Root)}
	tok, err := presentedToken(flag)
	if err != nil || tok > 0 || agent == "" {
		f.Token = tok
		return f, err
	}
	if t, ok, err := cp.files.HeldToken(cp.key, task, agent, f.Place); err == nil && ok {
		f.Token = t
	}
	return f, nil
}

// presentedToken is --token, else $TASKIE_CLAIM_TOKEN, 0 when neither.
func presentedToken(flag int64) (int64, error) {
	if flag < 0 {
		return 0, usageErr(fmt.Errorf("--token %d: a fencing token is positive", flag), "`taskie claim` prints it; `taskie query --claimed` lists them")
	}
	if flag > 0 {
		return flag, nil
	}
	v := strings.TrimSpace(os.Getenv(tokenEnv))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, usageErr(fmt.Errorf("%s=%q: a fencing token is a positive number", tokenEnv, v), "unset it, or set it to the token `taskie claim` printed")
	}
	return n, nil
}

// recordHeld keeps the token of a claim this command was granted, for the
// agent's later commands from this place.
func (cp *coordPlan) recordHeld(s *Streams, d parallel.ClaimDecision, tx *store.CoordTx) {
	if d.Claim.Token <= 0 || (d.Outcome != parallel.Granted && d.Outcome != parallel.Takeover) {
		return
	}
	h := store.Held{Task: d.Claim.Task, Agent: d.Claim.Agent, Place: d.Claim.Place, Token: d.Claim.Token}
	if err := tx.RecordHeld(h); err != nil {
		fmt.Fprintf(s.Err, "taskie: warning: task %d: recording its fencing token %d: %v (give --token %d to later commands)\n", h.Task, h.Token, err, h.Token)
	}
}

// dropHeld forgets the token of a claim the agent released itself.
func (cp *coordPlan) dropHeld(task domain.TaskID, agent string, f domain.Fence) {
	if f.Token > 0 {
		cp.files.RecordHeld(cp.ctx, cp.key, store.Held{Task: task, Agent: agent, Place: f.Place})
	}
}

// fenceHint is what to do after a refusal by the fence, "" for another
// refusal.
func fenceHint(err error, task domain.TaskID, agent string) string {
	var stale *parallel.StaleTokenError
	var place *parallel.PlaceError
	switch {
	case errors.As(err, &stale):
		return fmt.Sprintf("this claim was lost (taken over or released): nothing more is written for it; claim the task again (`taskie claim %d`) or take another (`taskie claim --next`)", task)
	case errors.As(err, &place):
		return fmt.Sprintf("two runners share the name %s: give this one another name (--as <another name>), or wait for the lease to expire, or end it with `taskie release %d --force`", agent, task)
	}
	return ""
}
