package crashtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// seededFindings is how many open findings the stress plan's review cycle
// starts with: enough that the finding workers rarely run out.
const seededFindings = 24

// TestStressMixedCommands runs many taskie processes at once against one
// plan for a bounded time — progress notes, state writers, tasks writers,
// phase moves (`done`), claims and releases, finding decisions, status
// reads and Stop hooks — and then checks that nothing was lost and nothing
// happened twice: validation and `recover --check` pass; every command that
// reported a change (by its --json output) has exactly one event, and the
// log has no other; every note is in its task file; tasks.md ends as the
// last TASK_STATUS event left it; no task was ever claimed by two agents at
// once; every hook stop exited 0 and allowed.
//
// Each task status and the phase have a single writer, so that the test
// knows which commands really changed something (a command that sets what
// is already there records no event). The status writers flip tasks 1 and 3
// between postponed and cancelled, which never start their lifecycle (a
// status request of a task with no record sets the cell alone, and neither
// is ready, so no claim takes them); the claims take tasks 4 and 5, whose
// claims and releases move their lifecycle (pending ⇄ assigned).
func TestStressMixedCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("stress test: skipped with -short")
	}
	h := newHarness(t, t.TempDir())
	root := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	setupStress(t, h, root)
	logPath := filepath.Join(planDir(root), "events.jsonl")
	start, err := os.Stat(logPath)
	if err != nil {
		t.Fatal(err)
	}

	s := &stress{t: t, h: h, root: root, deadline: time.Now().Add(stressDuration()),
		status: map[string]string{"1": "postponed", "3": "postponed"}, flips: map[string]int{},
		findingNotes: map[string]string{}, fixes: map[string]int{}, failed: map[string]int{}}
	workers := []func(w int){
		s.noter,                           // PROGRESS on tasks 1 and 2
		s.setter,                          // FIELD_SET review_model
		func(w int) { s.flipper(w, "1") }, // TASK_STATUS of task 1
		func(w int) { s.flipper(w, "3") }, // TASK_STATUS of task 3
		// claims: tasks 4 and 5, pending ⇄ assigned
		s.phaser,                        // PHASE_CHANGE code-review ⇄ post-code-review
		s.claimer, s.claimer, s.claimer, // claim --next, release
		s.decider, s.decider, // FINDING_FIXED / FINDING_DECLINED
		s.stopper, // status --json and hook stop
	}
	var wg sync.WaitGroup
	for w, fn := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(w)
		}()
	}
	wg.Wait()

	for _, args := range [][]string{{"validate"}, {"recover", "--check"}} {
		if r, err := h.run(root, args...); err != nil || r.code != 0 {
			t.Errorf("taskie %s after the stress: %v %s", strings.Join(args, " "), err, r)
		}
	}
	s.checkNotes()
	s.checkPlanLog(logPath, start.Size())
	s.checkTasksFile()
	s.checkClaims()
	s.checkHookLogs()
	t.Logf("%d workers for %v: %d notes, %d sets, status flips %v, %d phase moves, %d claims, %d releases, %d finding decisions (%d fixed), %d hook stops; refused or failed: %v",
		len(workers), stressDuration(), len(s.notes), s.sets, s.flips, s.phaseMoves, s.claims, s.releases,
		len(s.findingNotes), len(s.fixes), s.stops, s.failed)
}

// setupStress builds the crash test's plan, then puts it in a code-review
// cycle with open findings: phase code-review at iteration 1, standalone
// (next_phase null, so the Stop hooks run no review), the review and
// post-review files a post-review needs, and the review's FINDING_OPENED
// events appended as the hook writes them.
func setupStress(t *testing.T, h *harness, root string) {
	t.Helper()
	setup(t, h, root, rand.New(rand.NewPCG(1, 2)))
	h.must(root, "set", "next_phase", "null")
	h.must(root, "set", "phase", "code-review")
	h.must(root, "set", "phase_iteration", "1")
	pd := planDir(root)
	for name, body := range map[string]string{
		"task-2-review-1.md":      "# Code review 1\n\nFAIL: see the findings.\n",
		"task-2-post-review-1.md": "# Post-review 1\n\nEach finding fixed or declined.\n",
	} {
		if err := os.WriteFile(filepath.Join(pd, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var seed bytes.Buffer
	ts := time.Now().UTC().Format(time.RFC3339)
	fmt.Fprintf(&seed, `{"ts":%q,"plan":%q,"task":"2","event":"REVIEW_FINISHED","actor":"hook","meta":{"review":"code-review","iteration":1,"verdict":"FAIL"}}`+"\n", ts, planID)
	for i := 1; i <= seededFindings; i++ {
		fmt.Fprintf(&seed, `{"ts":%q,"plan":%q,"task":"2","event":"FINDING_OPENED","actor":"reviewer","meta":{"review":"code-review","iteration":1,"id":"F%d","severity":"major","title":"finding %d"}}`+"\n", ts, planID, i, i)
	}
	f, err := os.OpenFile(filepath.Join(pd, "events.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(seed.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	// tasks 1 and 3 are the status writers', 4 and 5 the claims'
	h.must(root, "task", "status", "1", "postponed")
	h.must(root, "task", "status", "3", "postponed")
	h.must(root, "task", "add", "--title", "Claimed one")
	h.must(root, "task", "add", "--title", "Claimed two")
	if r := h.must(root, "findings"); strings.Count(r.stdout, "\topen\t") != seededFindings {
		t.Fatalf("setup: want %d open findings, taskie findings printed:\n%s", seededFindings, r.stdout)
	}
	h.must(root, "validate")
}

// stress is one run: what its workers' commands reported, under mu.
type stress struct {
	t        *testing.T
	h        *harness
	root     string
	deadline time.Time

	mu           sync.Mutex
	notes        []string          // "task:text" of each note that reported success
	sets         int               // successful sets (each a distinct value)
	status       map[string]string // each flipped task's status, as its one writer last set it
	flips        map[string]int    // status commands that changed a task's status
	phaseMoves   int               // done commands that changed the phase
	claims       int               // claims granted
	releases     int               // claims released
	findingNotes map[string]string // note of each successful finding decision → its event
	fixes        map[string]int    // successful fixes by finding id
	stops        int               // hook stops run
	failed       map[string]int    // refused or failed commands by kind
}

// run runs one command; a timeout fails the test, a non-zero exit is
// counted under kind and returned as !ok.
func (s *stress) run(kind string, args ...string) (result, bool) {
	r, err := s.h.run(s.root, args...)
	if err != nil {
		s.t.Error(err)
		return r, false
	}
	if r.code != 0 {
		s.mu.Lock()
		s.failed[kind]++
		s.mu.Unlock()
		return r, false
	}
	return r, true
}

// decode reads a command's --json output into v; bad output fails the test.
func (s *stress) decode(r result, v any, args ...string) bool {
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		s.t.Errorf("taskie %s --json: %v in %q", strings.Join(args, " "), err, r.stdout)
		return false
	}
	return true
}

func (s *stress) noter(w int) {
	for n := 0; time.Now().Before(s.deadline); n++ {
		task := fmt.Sprint(1 + n%2)
		text := fmt.Sprintf("w%d-n%d", w, n)
		if _, ok := s.run("note", "task", "note", task, "--did", text, "--issues", "none", "--next", "go on"); ok {
			s.mu.Lock()
			s.notes = append(s.notes, task+":"+text)
			s.mu.Unlock()
		}
	}
}

func (s *stress) setter(w int) {
	for n := 0; time.Now().Before(s.deadline); n++ {
		if _, ok := s.run("set", "set", "review_model", fmt.Sprintf("m-w%d-%d", w, n)); ok {
			s.mu.Lock()
			s.sets++
			s.mu.Unlock()
		}
	}
}

// flipper is the one writer of task's status: cancelled, postponed, …
func (s *stress) flipper(_ int, task string) {
	for time.Now().Before(s.deadline) {
		s.mu.Lock()
		was := s.status[task]
		s.mu.Unlock()
		want := map[string]string{"postponed": "cancelled", "cancelled": "postponed"}[was]
		args := []string{"task", "status", task, want, "--json"}
		r, ok := s.run("task status", args...)
		var out struct{ Task, Status string }
		if !ok || !s.decode(r, &out, args...) {
			continue
		}
		if out.Task != task || out.Status != want {
			s.t.Errorf("taskie %s printed task %q status %q", strings.Join(args, " "), out.Task, out.Status)
			continue
		}
		s.mu.Lock()
		if out.Status != was {
			s.flips[task]++
		}
		s.status[task] = out.Status
		s.mu.Unlock()
	}
}

// phaser is the one writer of the phase: it moves the code-review cycle
// between the review and its post-review, which keeps the findings open to
// decisions.
func (s *stress) phaser(int) {
	phase := "code-review"
	for time.Now().Before(s.deadline) {
		want := map[string]string{"code-review": "post-code-review", "post-code-review": "code-review"}[phase]
		args := []string{"done", want, "--task", "2", "--json"}
		r, ok := s.run("done", args...)
		var out struct{ State struct{ Phase string } }
		if !ok || !s.decode(r, &out, args...) {
			continue
		}
		if out.State.Phase != want {
			s.t.Errorf("taskie %s printed phase %q", strings.Join(args, " "), out.State.Phase)
		}
		if out.State.Phase != phase {
			s.mu.Lock()
			s.phaseMoves++
			s.mu.Unlock()
		}
		phase = out.State.Phase
	}
}

// claimer claims the first ready task and releases it at once.
func (s *stress) claimer(w int) {
	agent := fmt.Sprintf("w%d", w)
	for time.Now().Before(s.deadline) {
		args := []string{"claim", "--next", "--as", agent, "--json"}
		r, ok := s.run("claim", args...)
		if !ok {
			if r.code != 1 { // 1: no task ready
				s.t.Errorf("taskie %s: %s", strings.Join(args, " "), r)
			}
			continue
		}
		var c struct{ Task, Agent, Outcome string }
		if !s.decode(r, &c, args...) {
			continue
		}
		if c.Agent != agent || c.Outcome != "granted" {
			s.t.Errorf("taskie %s: %+v, want a claim granted to %s (it holds nothing)", strings.Join(args, " "), c, agent)
		}
		s.mu.Lock()
		s.claims++
		s.mu.Unlock()
		args = []string{"release", c.Task, "--as", agent, "--json"}
		r, ok = s.run("release", args...)
		var rel struct{ Task, Agent, Outcome string }
		if !ok || !s.decode(r, &rel, args...) || rel.Outcome != "released" {
			s.t.Errorf("taskie %s by its holder: %s %s", strings.Join(args, " "), r, r.stdout)
			continue
		}
		s.mu.Lock()
		s.releases++
		s.mu.Unlock()
	}
}

// decider records decisions on random findings: mostly declined (which
// may repeat), sometimes fixed (which is final).
func (s *stress) decider(w int) {
	rng := rand.New(rand.NewPCG(uint64(w), 7))
	for n := 0; time.Now().Before(s.deadline); n++ {
		id := fmt.Sprintf("F%d", 1+rng.IntN(seededFindings))
		note := fmt.Sprintf("w%d-n%d", w, n)
		args := []string{"finding", "declined", id, "--why", note, "--json"}
		kind, status := "FINDING_DECLINED", "declined"
		if rng.IntN(4) == 0 {
			args = []string{"finding", "fixed", id, "--note", note, "--json"}
			kind, status = "FINDING_FIXED", "fixed"
		}
		r, ok := s.run("finding", args...)
		if !ok {
			if !strings.Contains(r.stderr, "already fixed") {
				s.t.Errorf("taskie %s: %s", strings.Join(args, " "), r)
			}
			continue
		}
		var out struct {
			Finding struct{ ID, Status, Note string }
		}
		if !s.decode(r, &out, args...) {
			continue
		}
		if f := out.Finding; f.ID != id || f.Status != status || f.Note != note {
			s.t.Errorf("taskie %s printed %+v", strings.Join(args, " "), f)
		}
		s.mu.Lock()
		s.findingNotes[note] = kind
		if kind == "FINDING_FIXED" {
			s.fixes[id]++
		}
		s.mu.Unlock()
	}
}

// stopper reads the plan and runs the Stop hook, both of which must
// succeed whatever the writers are doing.
func (s *stress) stopper(w int) {
	for n := 0; time.Now().Before(s.deadline); n++ {
		if r, err := s.h.run(s.root, "status", "--json"); err != nil || r.code != 0 {
			s.t.Errorf("taskie status during the stress: %v %s", err, r)
		}
		c, out, errb := s.h.command(s.root, []string{"hook", "stop"})
		c.Stdin = strings.NewReader(fmt.Sprintf(`{"session_id":"stress-%d","cwd":%q,"stop_hook_active":false}`, w, s.root))
		if err := c.Run(); err != nil {
			s.t.Errorf("taskie hook stop during the stress: %v: %s", err, errb)
		}
		if bytes.Contains(out.Bytes(), []byte(`"block"`)) {
			s.t.Errorf("taskie hook stop blocked during the stress: %s", out)
		}
		s.mu.Lock()
		s.stops++
		s.mu.Unlock()
	}
}

// checkNotes: every note that reported success is in its task file or the
// archive.
func (s *stress) checkNotes() {
	for _, n := range s.notes {
		task, text, _ := strings.Cut(n, ":")
		data, _ := os.ReadFile(filepath.Join(planDir(s.root), "task-"+task+".md"))
		arch, _ := os.ReadFile(filepath.Join(archiveDir(s.root), "task-"+task+".md"))
		whole := regexp.MustCompile(regexp.QuoteMeta(text) + `\b`) // w0-n1, not w0-n12
		if !whole.Match(data) && !whole.Match(arch) {
			s.t.Errorf("note %q of task %s reported success but is in neither its task file nor the archive", text, task)
		}
	}
}

// logEvent is what the checks read of a log line.
type logEvent struct {
	Event  string            `json:"event"`
	Task   string            `json:"task"`
	Actor  string            `json:"actor"`
	Tasks  map[string]string `json:"tasks"`
	Meta   map[string]any    `json:"meta"`
	Reason string            `json:"reason"`
}

// readLog reads the events of a log from offset off.
func readLog(t *testing.T, path string, off int64) []logEvent {
	t.Helper()
	data, err := readFrom(path, off)
	if err != nil {
		t.Fatal(err)
	}
	var out []logEvent
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e logEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Errorf("%s: unreadable line %q: %v", path, sc.Text(), err)
			continue
		}
		out = append(out, e)
	}
	return out
}

// checkPlanLog: the plan log holds exactly one event per reported change,
// and no other event.
func (s *stress) checkPlanLog(path string, off int64) {
	evs := readLog(s.t, path, off)
	byKind := map[string]int{}
	statusEvents := map[string]int{}
	seen := map[string]int{} // finding decision notes
	// A claim that finds its task still assigned to an agent whose claim
	// was released (the release's lifecycle move not yet committed) moves
	// it back to pending and on to assigned in its own commit; the late
	// release then has nothing to move.
	takeovers := 0
	for _, e := range evs {
		if e.Event == "STATE_TRANSITION" && strings.HasPrefix(e.Reason, "claim taken over") {
			takeovers++
		}
		byKind[e.Event]++
		switch e.Event {
		case "TASK_STATUS":
			for task := range e.Tasks {
				statusEvents[task]++
			}
		case "FINDING_FIXED", "FINDING_DECLINED":
			note, _ := e.Meta["note"].(string)
			seen[note]++
			if want, ok := s.findingNotes[note]; !ok || want != e.Event {
				s.t.Errorf("%s %v with note %q: no finding command reported it (reported: %q)", e.Event, e.Meta["id"], note, want)
			}
		}
	}
	for note, kind := range s.findingNotes {
		if seen[note] != 1 {
			s.t.Errorf("%s with note %q: %d events in the log, want exactly one", kind, note, seen[note])
		}
	}
	for id, n := range s.fixes {
		if n != 1 {
			s.t.Errorf("finding %s fixed by %d commands; a fix is final, so one at most", id, n)
		}
	}
	findingKinds := map[string]int{}
	for _, kind := range s.findingNotes {
		findingKinds[kind]++
	}
	want := map[string]int{
		// each claim and each release moves its task (pending ⇄ assigned)
		// in one commit of its own
		"STATE_TRANSITION":  s.claims + s.releases,
		"LIFECYCLE_CHANGED": s.claims + s.releases - takeovers,
		"PROGRESS":          len(s.notes),
		"FIELD_SET":         s.sets,
		"TASK_STATUS":       s.flips["1"] + s.flips["3"],
		"PHASE_CHANGE":      s.phaseMoves,
		"FINDING_FIXED":     findingKinds["FINDING_FIXED"],
		"FINDING_DECLINED":  findingKinds["FINDING_DECLINED"],
	}
	// the first claim of each task creates its record; the first claim of
	// the plan's wave starts it
	for _, kind := range []string{"TASK_CREATED", "GROUP_START"} {
		if byKind[kind] > 2 {
			s.t.Errorf("%s events: %d, want at most one per claimed task", kind, byKind[kind])
		}
		delete(byKind, kind)
	}
	for kind := range byKind {
		if _, ok := want[kind]; !ok {
			want[kind] = 0 // an event no command reported
		}
	}
	for kind, n := range want {
		if byKind[kind] != n {
			s.t.Errorf("%s events: %d, want one per change reported (%d)", kind, byKind[kind], n)
		}
	}
	for task, n := range s.flips {
		if statusEvents[task] != n {
			s.t.Errorf("TASK_STATUS events of task %s: %d, want one per status change (%d)", task, statusEvents[task], n)
		}
	}
}

// tasksRow matches a row of the stress plan's tasks.md: id and status.
var tasksRow = regexp.MustCompile(`(?m)^\|\s*(\d+)\s*\|\s*([a-z-]+)\s*\|`)

// checkTasksFile: tasks.md ends with each flipped task's status as its
// last TASK_STATUS event (and its one writer) left it.
func (s *stress) checkTasksFile() {
	pd := planDir(s.root)
	data, err := os.ReadFile(filepath.Join(pd, "tasks.md"))
	if err != nil {
		s.t.Fatal(err)
	}
	inFile := map[string]string{}
	for _, m := range tasksRow.FindAllStringSubmatch(string(data), -1) {
		inFile[m[1]] = m[2]
	}
	last := map[string]string{"1": "postponed", "3": "postponed"} // as setup left them
	for _, e := range readLog(s.t, filepath.Join(pd, "events.jsonl"), 0) {
		if e.Event == "TASK_STATUS" {
			for task, st := range e.Tasks {
				last[task] = st
			}
		}
	}
	for _, task := range []string{"1", "3"} {
		if inFile[task] != last[task] || inFile[task] != s.status[task] {
			s.t.Errorf("task %s: tasks.md says %q, the last TASK_STATUS event %q, its last status command %q", task, inFile[task], last[task], s.status[task])
		}
	}
}

// checkClaims replays the coordination log: no task is claimed while
// another agent holds it, one CLAIM per claim granted and one RELEASE per
// release, and no claim is left.
func (s *stress) checkClaims() {
	coord := filepath.Join(s.root, ".taskie", "coord", planID)
	if s.claims == 0 {
		s.t.Errorf("no claim was granted during the stress")
		return
	}
	holder := map[string]string{}
	n := map[string]int{}
	for _, e := range readLog(s.t, filepath.Join(coord, "events.jsonl"), 0) {
		n[e.Event]++
		switch e.Event {
		case "CLAIM":
			if h := holder[e.Task]; h != "" {
				s.t.Errorf("task %s claimed by %s while %s held it", e.Task, e.Actor, h)
			}
			holder[e.Task] = e.Actor
		case "RELEASE":
			if holder[e.Task] != e.Actor {
				s.t.Errorf("task %s released by %s, held by %q", e.Task, e.Actor, holder[e.Task])
			}
			delete(holder, e.Task)
		default:
			s.t.Errorf("coordination event %s of task %s by %s: none was expected", e.Event, e.Task, e.Actor)
		}
	}
	if n["CLAIM"] != s.claims || n["RELEASE"] != s.releases {
		s.t.Errorf("coordination log: %d CLAIM, %d RELEASE; the commands reported %d claims, %d releases", n["CLAIM"], n["RELEASE"], s.claims, s.releases)
	}
	var left struct{ Claims []json.RawMessage }
	data, err := os.ReadFile(filepath.Join(coord, "claims.json"))
	if err == nil {
		err = json.Unmarshal(data, &left)
	}
	if err != nil || len(left.Claims) > 0 {
		s.t.Errorf("claims.json after every release: %v %s", err, data)
	}
}

// checkHookLogs: every hook stop logged one decision, an allow, and the
// hook's own log (bad input, failures) stayed empty.
func (s *stress) checkHookLogs() {
	logs := filepath.Join(s.root, ".taskie", "logs")
	if data, err := os.ReadFile(filepath.Join(logs, "hook.log")); err == nil && len(data) > 0 {
		s.t.Errorf("hook.log after the stress:\n%s", data)
	}
	why := map[string]int{}
	stops := 0
	for _, e := range readLogLines(s.t, filepath.Join(logs, planID+".log")) {
		if e["msg"] != "stop" {
			continue
		}
		stops++
		if e["decision"] != "allow" || e["level"] != "INFO" {
			s.t.Errorf("hook stop logged %v", e)
		}
		w, _ := e["why"].(string)
		why[w]++
	}
	if stops != s.stops {
		s.t.Errorf("%s.log: %d stop decisions, want one per hook stop (%d)", planID, stops, s.stops)
	}
	var ws []string
	for w, n := range why {
		ws = append(ws, fmt.Sprintf("%s×%d", w, n))
	}
	sort.Strings(ws)
	s.t.Logf("hook decisions: %s", strings.Join(ws, ", "))
}

// readLogLines reads a JSON-lines log as maps.
func readLogLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return nil
	}
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Errorf("%s: unreadable line %q", path, line)
			continue
		}
		out = append(out, m)
	}
	return out
}

// stressDuration bounds the stress test; TASKIE_STRESS overrides it.
func stressDuration() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("TASKIE_STRESS")); err == nil && d > 0 {
		return d
	}
	return 8 * time.Second
}
