package cli

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/hook"
	"github.com/taskie-dev/taskie/internal/lifecycle"
)

// Flag parsing of every command, apart from running (see style_test.go):
// each command is built with a run function that records its options.

// flagCase is one command line and the options it must parse to; err
// wants a usage error (exit 2) and run not reached.
type flagCase[O any] struct {
	name string
	args []string
	want O
	err  bool
}

// The streams and globals the commands are built with: the options must
// carry these very pointers.
var (
	flagStreams = &Streams{}
	flagGlobals = &globals{}
)

// sameFunc compares two functions by their code pointer.
func sameFunc(a, b func(hook.Env) int) bool {
	return reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer()
}

// checkFlags parses each case's command line with the command build
// returns and compares the options run was given with the case's.
func checkFlags[O any](t *testing.T, build func(run func(*O) error) *cobra.Command, cases []flagCase[O]) {
	t.Helper()
	opts := []cmp.Option{
		cmp.AllowUnexported(*new(O)),
		cmp.Comparer(func(a, b *Streams) bool { return a == b }),
		cmp.Comparer(func(a, b *globals) bool { return a == b }),
		cmp.Comparer(func(a, b context.Context) bool { return a == b }),
		cmp.Comparer(sameFunc),
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got *O
			err := parse(t, build(func(o *O) error { got = o; return nil }), tc.args...)
			if tc.err {
				var ee *exitError
				if !errors.As(err, &ee) || ee.code != ExitUsage {
					t.Fatalf("err = %v, want a usage error", err)
				}
				if got != nil {
					t.Error("run was reached despite the usage error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got == nil {
				t.Fatal("run was not reached")
			}
			if diff := cmp.Diff(tc.want, *got, opts...); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStatusFlags(t *testing.T) {
	s, g, bg := flagStreams, flagGlobals, context.Background()
	checkFlags(t, func(run func(*statusOpts) error) *cobra.Command { return newStatusCmdWith(s, g, run) }, []flagCase[statusOpts]{
		{name: "defaults", want: statusOpts{s: s, g: g, ctx: bg}},
		{name: "plan", args: []string{"login"}, want: statusOpts{s: s, g: g, ctx: bg, plan: "login"}},
		{name: "json", args: []string{"--json"}, want: statusOpts{s: s, g: g, ctx: bg, asJSON: true}},
		{name: "watch", args: []string{"api", "--watch"}, want: statusOpts{s: s, g: g, ctx: bg, plan: "api", watch: true}},
		{name: "all", args: []string{"--all", "--json"}, want: statusOpts{s: s, g: g, ctx: bg, all: true, asJSON: true}},
		{name: "all and a plan", args: []string{"--all", "api"}, err: true},
		{name: "all and watch", args: []string{"--all", "--watch"}, err: true},
		{name: "two plans", args: []string{"a", "b"}, err: true},
		{name: "unknown flag", args: []string{"--jsno"}, err: true},
	})
}

func TestSetFlags(t *testing.T) {
	s, g := flagStreams, flagGlobals
	checkFlags(t, func(run func(*setOpts) error) *cobra.Command { return newSetCmdWith(s, g, run) }, []flagCase[setOpts]{
		{name: "field and value", args: []string{"max_reviews", "12"}, want: setOpts{s: s, g: g, field: "max_reviews", value: "12"}},
		{name: "json", args: []string{"next_phase", "null", "--json"}, want: setOpts{s: s, g: g, field: "next_phase", value: "null", asJSON: true}},
		{name: "no value", args: []string{"max_reviews"}, err: true},
		{name: "three arguments", args: []string{"a", "b", "c"}, err: true},
	})
}

func TestPauseFlags(t *testing.T) {
	s, g := flagStreams, flagGlobals
	checkFlags(t, func(run func(*pauseOpts) error) *cobra.Command { return newPauseCmdWith(s, g, false, run) }, []flagCase[pauseOpts]{
		{name: "defaults", want: pauseOpts{s: s, g: g}},
		{name: "plan", args: []string{"login"}, want: pauseOpts{s: s, g: g, plan: "login"}},
		{name: "json", args: []string{"--json"}, want: pauseOpts{s: s, g: g, asJSON: true}},
		{name: "two plans", args: []string{"a", "b"}, err: true},
	})
}

func TestResumeFlags(t *testing.T) {
	s, g := flagStreams, flagGlobals
	checkFlags(t, func(run func(*pauseOpts) error) *cobra.Command { return newPauseCmdWith(s, g, true, run) }, []flagCase[pauseOpts]{
		{name: "defaults", want: pauseOpts{s: s, g: g, resume: true}},
		{name: "plan and json", args: []string{"login", "--json"}, want: pauseOpts{s: s, g: g, resume: true, plan: "login", asJSON: true}},
		{name: "two plans", args: []string{"a", "b"}, err: true},
	})
}

func TestDiagramFlags(t *testing.T) {
	s := flagStreams
	checkFlags(t, func(run func(*diagramOpts) error) *cobra.Command { return newDiagramCmdWith(s, run) }, []flagCase[diagramOpts]{
		{name: "defaults", want: diagramOpts{s: s}},
		{name: "lifecycle", args: []string{"--lifecycle"}, want: diagramOpts{s: s, lifecycle: true}},
		{name: "an argument", args: []string{"phases"}, err: true},
	})
}

func TestHistoryFlags(t *testing.T) {
	s, g := flagStreams, flagGlobals
	checkFlags(t, func(run func(*historyOpts) error) *cobra.Command { return newHistoryCmdWith(s, g, run) }, []flagCase[historyOpts]{
		{name: "defaults", want: historyOpts{s: s, g: g}},
		{name: "task and json", args: []string{"3", "--json"}, want: historyOpts{s: s, g: g, task: "3", asJSON: true}},
		{name: "last", args: []string{"-n", "20"}, want: historyOpts{s: s, g: g, last: 20}},
		{name: "last long", args: []string{"--last=5"}, want: historyOpts{s: s, g: g, last: 5}},
		{name: "two tasks", args: []string{"1", "2"}, err: true},
		{name: "last not a number", args: []string{"-n", "many"}, err: true},
	})
}

func TestLogFlags(t *testing.T) {
	s, g := flagStreams, flagGlobals
	checkFlags(t, func(run func(*logOpts) error) *cobra.Command { return newLogCmdWith(s, g, run) }, []flagCase[logOpts]{
		{name: "defaults", want: logOpts{s: s, g: g}},
		{name: "json", args: []string{"--json"}, want: logOpts{s: s, g: g, asJSON: true}},
		{name: "last", args: []string{"-n", "7"}, want: logOpts{s: s, g: g, last: 7}},
		{name: "an argument", args: []string{"3"}, err: true},
	})
}

func TestRecoverFlags(t *testing.T) {
	s, g := flagStreams, flagGlobals
	checkFlags(t, func(run func(*recoverOpts) error) *cobra.Command { return newRecoverCmdWith(s, g, run) }, []flagCase[recoverOpts]{
		{name: "defaults", want: recoverOpts{s: s, g: g}},
		{name: "plan and write", args: []string{"login", "--write"}, want: recoverOpts{s: s, g: g, plan: "login", write: true}},
		{name: "write and force", args: []string{"--write", "--force"}, want: recoverOpts{s: s, g: g, write: true, force: true}},
		{name: "check", args: []string{"--check"}, want: recoverOpts{s: s, g: g, check: true}},
		{name: "check json", args: []string{"--check", "--json"}, want: recoverOpts{s: s, g: g, check: true, asJSON: true}},
		{name: "write json", args: []string{"login", "--write", "--json"}, want: recoverOpts{s: s, g: g, plan: "login", write: true, asJSON: true}},
		{name: "force without write", args: []string{"--force"}, err: true},
		{name: "check and write", args: []string{"--check", "--write"}, err: true},
		{name: "two plans", args: []string{"a", "b"}, err: true},
	})
}

func TestQueryFlags(t *testing.T) {
	s, g := flagStreams, flagGlobals
	checkFlags(t, func(run func(*queryOpts) error) *cobra.Command { return newQueryCmdWith(s, g, run) }, []flagCase[queryOpts]{
		{name: "defaults", want: queryOpts{s: s, g: g}},
		{name: "state and task", args: []string{"--state", "testing", "--task", "3"}, want: queryOpts{s: s, g: g, state: "testing", task: "3"}},
		{name: "selectors", args: []string{"--stuck", "--escalated", "--failing"}, want: queryOpts{s: s, g: g, stuck: true, escalated: true, failing: true}},
		{name: "metrics and json", args: []string{"--metrics", "--json"}, want: queryOpts{s: s, g: g, metrics: true, asJSON: true}},
		{name: "claimed", args: []string{"--claimed"}, want: queryOpts{s: s, g: g, claimed: true}},
		{name: "an argument", args: []string{"3"}, err: true},
	})
}

func TestReadyFlags(t *testing.T) {
	s, g := flagStreams, flagGlobals
	checkFlags(t, func(run func(*readyOpts) error) *cobra.Command { return newReadyCmdWith(s, g, run) }, []flagCase[readyOpts]{
		{name: "defaults", want: readyOpts{s: s, g: g}},
		{name: "plan and json", args: []string{"login", "--json"}, want: readyOpts{s: s, g: g, plan: "login", asJSON: true}},
		{name: "two plans", args: []string{"a", "b"}, err: true},
	})
}

func TestClaimFlags(t *testing.T) {
	s, g := flagStreams, flagGlobals
	checkFlags(t, func(run func(*claimOpts) error) *cobra.Command { return newClaimCmdWith(s, g, run) }, []flagCase[claimOpts]{
		{name: "task", args: []string{"3", "--as", "worker-1"}, want: claimOpts{s: s, g: g, task: "3", as: "worker-1"}},
		{name: "next", args: []string{"--next", "--ttl", "1h", "--json"}, want: claimOpts{s: s, g: g, next: true, ttl: time.Hour, asJSON: true}},
		{name: "no task", args: []string{"--as", "w"}, err: true},
		{name: "task and next", args: []string{"3", "--next"}, err: true},
		{name: "bad ttl", args: []string{"3", "--ttl", "soon"}, err: true},
	})
}

func TestHeartbeatFlags(t *testing.T) {
	s, g := flagStreams, flagGlobals
	checkFlags(t, func(run func(*claimOpts) error) *cobra.Command { return newHeartbeatCmdWith(s, g, run) }, []flagCase[claimOpts]{
		{name: "task", args: []string{"3"}, want: claimOpts{s: s, g: g, task: "3"}},
		{name: "flags", args: []string{"3", "--as", "w", "--ttl", "45m", "--json"}, want: claimOpts{s: s, g: g, task: "3", as: "w", ttl: 45 * time.Minute, asJSON: true}},
		{name: "no task", args: nil, err: true},
		{name: "next", args: []string{"3", "--next"}, err: true},
	})
}

func TestReleaseFlags(t *testing.T) {
	s, g := flagStreams, flagGlobals
	checkFlags(t, func(run func(*claimOpts) error) *cobra.Command { return newReleaseCmdWith(s, g, run) }, []flagCase[claimOpts]{
		{name: "task", args: []string{"3", "--as", "w", "--json"}, want: claimOpts{s: s, g: g, task: "3", as: "w", asJSON: true}},
		{name: "two tasks", args: []string{"3", "4"}, err: true},
		{name: "ttl", args: []string{"3", "--ttl", "1h"}, err: true},
	})
}

func TestGroupsFlags(t *testing.T) {
	s, g := flagStreams, flagGlobals
	checkFlags(t, func(run func(*groupsOpts) error) *cobra.Command { return newGroupsCmdWith(s, g, run) }, []flagCase[groupsOpts]{
		{name: "defaults", want: groupsOpts{s: s, g: g}},
		{name: "plan and max", args: []string{"login", "--max", "3"}, want: groupsOpts{s: s, g: g, plan: "login", max: 3}},
		{name: "json and verbose", args: []string{"--json", "-v"}, want: groupsOpts{s: s, g: g, asJSON: true, verbose: true}},
		{name: "two plans", args: []string{"a", "b"}, err: true},
		{name: "max not a number", args: []string{"--max", "x"}, err: true},
	})
}

func TestWorktreeAddFlags(t *testing.T) {
	s, g := flagStreams, flagGlobals
	checkFlags(t, func(run func(*worktreeAddOpts) error) *cobra.Command { return newWorktreeAddCmdWith(s, g, run) }, []flagCase[worktreeAddOpts]{
		{name: "defaults", want: worktreeAddOpts{s: s, g: g, base: "HEAD"}},
		{name: "task", args: []string{"3"}, want: worktreeAddOpts{s: s, g: g, task: "3", base: "HEAD"}},
		{name: "path base json", args: []string{"4", "--path", "../wt-4", "--base", "main", "--json"},
			want: worktreeAddOpts{s: s, g: g, task: "4", path: "../wt-4", base: "main", asJSON: true}},
		{name: "two tasks", args: []string{"3", "4"}, err: true},
	})
}

func TestWorktreeListFlags(t *testing.T) {
	s, g := flagStreams, flagGlobals
	checkFlags(t, func(run func(*worktreeListOpts) error) *cobra.Command { return newWorktreeListCmdWith(s, g, run) }, []flagCase[worktreeListOpts]{
		{name: "defaults", want: worktreeListOpts{s: s, g: g}},
		{name: "json", args: []string{"--json"}, want: worktreeListOpts{s: s, g: g, asJSON: true}},
		{name: "an argument", args: []string{"3"}, err: true},
	})
}

func TestWorktreeRemoveFlags(t *testing.T) {
	s, g := flagStreams, flagGlobals
	checkFlags(t, func(run func(*worktreeRemoveOpts) error) *cobra.Command { return newWorktreeRemoveCmdWith(s, g, run) }, []flagCase[worktreeRemoveOpts]{
		{name: "defaults", want: worktreeRemoveOpts{s: s, g: g}},
		{name: "task and force", args: []string{"3", "--force"}, want: worktreeRemoveOpts{s: s, g: g, task: "3", force: true}},
		{name: "json", args: []string{"3", "--json"}, want: worktreeRemoveOpts{s: s, g: g, task: "3", asJSON: true}},
		{name: "two tasks", args: []string{"3", "4"}, err: true},
	})
}

func TestTaskResultFlags(t *testing.T) {
	s, g := flagStreams, flagGlobals
	checkFlags(t, func(run func(*taskResultOpts) error) *cobra.Command { return newTaskResultCmdWith(s, g, run) }, []flagCase[taskResultOpts]{
		{name: "show", args: []string{"3"}, want: taskResultOpts{s: s, g: g, task: "3"}},
		{name: "complete", args: []string{"3", "--status", "complete", "--commit", "1a2b3c4", "--as", "w", "--json"},
			want: taskResultOpts{s: s, g: g, task: "3", status: "complete", commit: "1a2b3c4", as: "w", asJSON: true}},
		{name: "failed with a note", args: []string{"3", "--status=failed", "--note", "tests time out"},
			want: taskResultOpts{s: s, g: g, task: "3", status: "failed", note: "tests time out"}},
		{name: "no task", args: nil, err: true},
	})
}

// verb is the lifecycle command of action a.
func verb(t *testing.T, a lifecycle.Action) taskVerb {
	t.Helper()
	for _, v := range taskVerbs {
		if v.action == a {
			return v
		}
	}
	t.Fatalf("no lifecycle command %s", a)
	return taskVerb{}
}

func TestTaskMoveFlags(t *testing.T) {
	s, g := flagStreams, flagGlobals
	build := func(a lifecycle.Action) func(func(*taskMoveOpts) error) *cobra.Command {
		return func(run func(*taskMoveOpts) error) *cobra.Command { return newTaskMoveCmdWith(s, g, verb(t, a), run) }
	}
	checkFlags(t, build(lifecycle.ActMove), []flagCase[taskMoveOpts]{
		{name: "move", args: []string{"3", "testing"}, want: taskMoveOpts{s: s, g: g, action: lifecycle.ActMove, task: "3", state: "testing", actor: "agent"}},
		{name: "move with actor and reason", args: []string{"3", "in_progress", "--actor", "hook", "--reason", "review failed"},
			want: taskMoveOpts{s: s, g: g, action: lifecycle.ActMove, task: "3", state: "in_progress", actor: "hook", reason: "review failed"}},
		{name: "move json", args: []string{"3", "testing", "--json"},
			want: taskMoveOpts{s: s, g: g, action: lifecycle.ActMove, task: "3", state: "testing", actor: "agent", asJSON: true}},
		{name: "move without a state", args: []string{"3"}, err: true},
		{name: "move with a note", args: []string{"3", "testing", "--note", "x"}, err: true},
	})
	checkFlags(t, build(lifecycle.ActRetry), []flagCase[taskMoveOpts]{
		{name: "retry", args: []string{"3", "--actor", "cto", "--note", "use the streaming API"},
			want: taskMoveOpts{s: s, g: g, action: lifecycle.ActRetry, task: "3", actor: "cto", note: "use the streaming API"}},
		{name: "retry with a state", args: []string{"3", "testing"}, err: true},
	})
	checkFlags(t, build(lifecycle.ActFail), []flagCase[taskMoveOpts]{
		{name: "fail", args: []string{"3", "--reason", "red"}, want: taskMoveOpts{s: s, g: g, action: lifecycle.ActFail, task: "3", actor: "agent", reason: "red"}},
		{name: "fail json", args: []string{"3", "--json"}, want: taskMoveOpts{s: s, g: g, action: lifecycle.ActFail, task: "3", actor: "agent", asJSON: true}},
		{name: "fail without a task", args: nil, err: true},
	})
}

func TestFindingsFlags(t *testing.T) {
	s, g := flagStreams, flagGlobals
	checkFlags(t, func(run func(*findingsOpts) error) *cobra.Command { return newFindingsCmdWith(s, g, run) }, []flagCase[findingsOpts]{
		{name: "defaults", want: findingsOpts{s: s, g: g}},
		{name: "plan and open", args: []string{"login", "--open"}, want: findingsOpts{s: s, g: g, plan: "login", open: true}},
		{name: "json", args: []string{"--json"}, want: findingsOpts{s: s, g: g, asJSON: true}},
		{name: "two plans", args: []string{"a", "b"}, err: true},
	})
}

func TestFindingFlags(t *testing.T) {
	s, g := flagStreams, flagGlobals
	checkFlags(t, func(run func(*findingOpts) error) *cobra.Command { return newFindingFixedCmdWith(s, g, run) }, []flagCase[findingOpts]{
		{name: "fixed", args: []string{"F3"}, want: findingOpts{s: s, g: g, id: "F3"}},
		{name: "fixed with a note", args: []string{"F3", "--note", "nil check added"}, want: findingOpts{s: s, g: g, id: "F3", text: "nil check added"}},
		{name: "fixed json", args: []string{"F3", "--json"}, want: findingOpts{s: s, g: g, id: "F3", asJSON: true}},
		{name: "fixed without an id", args: nil, err: true},
		{name: "fixed with why", args: []string{"F3", "--why", "x"}, err: true},
	})
	checkFlags(t, func(run func(*findingOpts) error) *cobra.Command { return newFindingDeclinedCmdWith(s, g, run) }, []flagCase[findingOpts]{
		{name: "declined", args: []string{"F4", "--why", "generated file"}, want: findingOpts{s: s, g: g, decline: true, id: "F4", text: "generated file"}},
		{name: "declined without why", args: []string{"F4"}, want: findingOpts{s: s, g: g, decline: true, id: "F4"}},
		{name: "declined json", args: []string{"F4", "--why", "generated file", "--json"},
			want: findingOpts{s: s, g: g, decline: true, id: "F4", text: "generated file", asJSON: true}},
		{name: "declined two ids", args: []string{"F4", "F5"}, err: true},
		{name: "declined with a note", args: []string{"F4", "--note", "x"}, err: true},
	})
}

func TestStoreFlags(t *testing.T) {
	s, g := flagStreams, flagGlobals
	for name, build := range map[string]func(*Streams, *globals, func(*storeOpts) error) *cobra.Command{
		"migrate": newStoreMigrateCmdWith, "status": newStoreStatusCmdWith,
	} {
		t.Run(name, func(t *testing.T) {
			checkFlags(t, func(run func(*storeOpts) error) *cobra.Command { return build(s, g, run) }, []flagCase[storeOpts]{
				{name: "defaults", want: storeOpts{s: s, g: g}},
				{name: "json", args: []string{"--json"}, want: storeOpts{s: s, g: g, asJSON: true}},
				{name: "an argument", args: []string{"x"}, err: true},
			})
		})
	}
	for name, in := range map[string]bool{"import": true, "export": false} {
		t.Run(name, func(t *testing.T) {
			checkFlags(t, func(run func(*storeCopyOpts) error) *cobra.Command { return newStoreCopyCmdWith(s, g, in, run) }, []flagCase[storeCopyOpts]{
				{name: "defaults", want: storeCopyOpts{s: s, g: g, in: in}},
				{name: "plan replace json", args: []string{"login", "--replace", "--json"}, want: storeCopyOpts{s: s, g: g, in: in, plan: "login", replace: true, asJSON: true}},
				{name: "two plans", args: []string{"a", "b"}, err: true},
			})
		})
	}
}

func TestHookFlags(t *testing.T) {
	s := flagStreams
	checkFlags(t, func(run func(*hookOpts) error) *cobra.Command { return newHookCmdWith(s, run) }, []flagCase[hookOpts]{
		{name: "unknown hook", args: []string{"pre-tool", "x"}, want: hookOpts{s: s, hook: []string{"pre-tool", "x"}}},
	})
	checkFlags(t, func(run func(*hookStopOpts) error) *cobra.Command { return newHookStopCmdWith(s, run) }, []flagCase[hookStopOpts]{
		{name: "stop", want: hookStopOpts{s: s}},
		{name: "stop format", args: []string{"--format", "json"}, want: hookStopOpts{s: s, format: "json"}},
		{name: "stop with an argument", args: []string{"x"}, err: true},
	})
	for name, fn := range map[string]func(hook.Env) int{"session-start": hook.SessionStart, "subagent-stop": hook.SubagentStop} {
		t.Run(name, func(t *testing.T) {
			checkFlags(t, func(run func(*hookEventOpts) error) *cobra.Command { return newHookEventCmdWith(s, name, "", fn, run) }, []flagCase[hookEventOpts]{
				{name: "defaults", want: hookEventOpts{s: s, hook: fn}},
				{name: "an argument", args: []string{"x"}, err: true},
			})
		})
	}
	if sameFunc(hook.SessionStart, hook.SubagentStop) {
		t.Error("sameFunc cannot tell two hooks apart")
	}
}
