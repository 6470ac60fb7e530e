# taskie: build, demo, check, test. `make demo` and `make test` are the README's two set-up
# commands; `make check` is the quicker edit-test loop.
GO      ?= go
BIN     := bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/taskie-dev/taskie/internal/cli.Version=$(VERSION)

.PHONY: build install demo check test test-short lint fmt cross bench clean

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/taskie ./cmd/taskie

install:
	CGO_ENABLED=0 $(GO) install -trimpath -ldflags '$(LDFLAGS)' ./cmd/taskie

$(BIN)/fakereviewer: $(shell find internal/testtools -name '*.go')
	$(GO) build -o $@ ./internal/testtools/fakereviewer

# `make demo KEEP=1` keeps the sample project and says how to look at it.
KEEP ?=
demo: build $(BIN)/fakereviewer
	$(GO) run ./demo -taskie $(BIN)/taskie -reviewer $(BIN)/fakereviewer$(if $(filter-out 0 no false,$(KEEP)), -keep)

# Everything at once on the 2 cores of a small machine (docs/performance.md
# says how long and how it was measured), the longest parts first:
#   - the fleet test (PostgreSQL behind a 50 ms link) and the crash tests
#     (a 50 s kill loop), which mostly wait, beside the real Claude Code
#     and Codex clients (e2e, two at a time);
#   - the race-detector run of the unit tests, then the testscripts and
#     the repository-wide checks of the source and docs;
#   - the lint, the cross-builds and the fuzzing (-k: one failing does not
#     stop the others), at a lower priority (nice): they only compute, and
#     take the cores the tests leave, while the tests that measure time
#     (timeouts, the real clients) get the CPU they wait for.
# The packages that drive the taskie binary (testscripts, real clients,
# crash, fleet) and the checks of the source and docs run without the race
# detector: their concurrency is between processes, or there is none, and
# under it every command they start pays its start-up cost (8.6 min
# instead of 50 s for the testscripts). -vet=off: the lint's `go vet ./...`
# runs every check that go test would run again for each package.
# Each stream of `go test -json` reaches testsum through a named pipe of
# its own (lines written to one pipe by two writers can cut into each
# other): progress per package as it finishes, the output of failing
# tests, and at the end the totals and every skipped test by name and
# reason (a skipped real-client or database test is never silent). Each
# part's exit status is checked besides the summary's.
PROCESS_TESTS := internal/cli|e2e|internal/crashtest|internal/fleettest
SOURCE_CHECKS := github.com/taskie-dev/taskie|github.com/taskie-dev/taskie/internal/docstest
GOTEST := $(GO) test -vet=off -count=1 -json
test:
	@d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; \
	$(GO) build -o $$d/testsum ./internal/testtools/testsum || exit 1; \
	units=$$($(GO) list ./... | grep -Ev '/($(PROCESS_TESTS))$$' | grep -Evx '$(SOURCE_CHECKS)') || exit 1; \
	mkfifo $$d/long $$d/units || exit 1; \
	{ $(GOTEST) -p 3 ./internal/fleettest ./internal/crashtest ./e2e > $$d/long; echo $$? > $$d/long.rc; } & \
	{ { $(GOTEST) -race $$units; echo $$? > $$d/race.rc; \
	    $(GOTEST) ./internal/cli . ./internal/docstest; echo $$? > $$d/proc.rc; } > $$d/units; } & \
	{ nice -n 10 $(MAKE) -k -s lint cross fuzz > $$d/other.out 2>&1; echo $$? > $$d/other.rc; } & \
	$$d/testsum $$d/long $$d/units; s=$$?; wait; \
	cat $$d/other.out; \
	for part in "long:the fleet, crash and real-client tests" "race:the unit tests (race detector)" \
	    "proc:the testscripts and the source and docs checks" "other:the lint, cross-builds or fuzzing"; do \
	  test "$$(cat $$d/$${part%%:*}.rc)" = 0 || { echo "make test: $${part#*:} failed (output above)"; s=1; }; \
	done; \
	exit $$s

# The edit-test loop (about a minute and a half with a warm build cache):
# lint beside the unit tests and the testscripts, without the race detector. It leaves
# to `make test` the real Claude Code and Codex clients (e2e), the crash
# tests, the race detector, fuzzing beyond the seed corpora and the
# cross-builds. -count=1: tests that build and run the binary cannot see
# that its sources changed, so a cached pass could be stale. The
# testscripts (internal/cli), the longest package, are listed first so that
# they start first and the rest runs beside them.
CHECK_SKIP := e2e|internal/crashtest|internal/cli|internal/fleettest
check:
	@d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; \
	( nice -n 10 $(MAKE) -s lint >$$d/lint.out 2>&1; echo $$? >$$d/lint.rc ) & \
	$(GO) test -vet=off -count=1 ./internal/cli $$($(GO) list ./... | grep -Ev '/($(CHECK_SKIP))$$'); t=$$?; \
	wait; cat $$d/lint.out; \
	test "$$(cat $$d/lint.rc)" = 0 || { echo "make check: the lint failed (output above)"; exit 1; }; \
	exit $$t

test-short:
	$(GO) test -count=1 ./...

STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

lint:
	$(GO) mod tidy -diff
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo 'gofmt needed'; exit 1; }
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	@for f in .ci/run bench/run $$(git ls-files '*.sh'); do bash -n "$$f" || { echo "shell syntax error in $$f"; exit 1; }; done

fmt:
	gofmt -w $$(git ls-files '*.go')

# Fuzz the parsers of every file and input taskie reads (docs/reliability.md#bad-input), each
# target for FUZZTIME (`go test -fuzz` takes one target per run, and each
# run also spends 1-3 s building and starting): under 45 s in all by
# default so that `make test` stays fast; `make fuzz FUZZTIME=15s` runs
# longer. Plain `go test` runs the seed corpora (testdata/fuzz/) too. Go 1.26's fuzz coordinator may
# fail a run that found nothing with a bare "context deadline exceeded" at
# the end of FUZZTIME (Go issue 75804): such a run,
# which writes no failing input, is retried once.
FUZZTIME ?= 3s
fuzz_run = for try in 1 2; do \
	  out=$$($(GO) test -run='^$$' -fuzz='^$(1)$$' -fuzztime=$(FUZZTIME) -parallel=1 $(2) 2>&1) && { printf '%s: %s\n' '$(1)' "$$(printf '%s\n' "$$out" | tail -n 1)"; break; }; \
	  printf '%s\n' "$$out" | grep -v '^fuzz: elapsed'; \
	  if [ $$try = 2 ] || printf '%s\n' "$$out" | grep -q 'Failing input written' || ! printf '%s\n' "$$out" | grep -qx '[[:space:]]*context deadline exceeded'; then exit 1; fi; \
	  echo "$(1): Go fuzz coordinator deadline race (no failing input), retrying"; \
	done

.PHONY: fuzz
fuzz:
	@$(call fuzz_run,FuzzHookInput,./internal/hook)
	@$(call fuzz_run,FuzzStateDecode,./internal/state)
	@$(call fuzz_run,FuzzStateApply,./internal/state)
	@$(call fuzz_run,FuzzParseTasks,./internal/plan)
	@$(call fuzz_run,FuzzParseFileName,./internal/plan)
	@$(call fuzz_run,FuzzTaskFile,./internal/continuity)
	@$(call fuzz_run,FuzzEventsScan,./internal/events)

# Every platform our users run: macOS and Windows builds must compile.
cross:
	GOOS=darwin GOARCH=arm64 $(GO) build ./...
	GOOS=windows GOARCH=amd64 $(GO) build ./...

bench:
	bash bench/run

clean:
	rm -rf $(BIN)
