# taskie: build, demo, test. `make demo` and `make test` are the README's two commands.
GO      ?= go
BIN     := bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/taskie-dev/taskie/internal/cli.Version=$(VERSION)

.PHONY: build install demo test test-short lint fmt cross bench clean

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/taskie ./cmd/taskie

install:
	CGO_ENABLED=0 $(GO) install -trimpath -ldflags '$(LDFLAGS)' ./cmd/taskie

$(BIN)/fakereviewer: $(shell find internal/testtools -name '*.go')
	$(GO) build -o $@ ./internal/testtools/fakereviewer

demo: build $(BIN)/fakereviewer
	$(GO) run ./demo -taskie $(BIN)/taskie -reviewer $(BIN)/fakereviewer

test: lint cross
	$(GO) test -race -count=1 ./...

test-short:
	$(GO) test -count=1 ./...

STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

lint:
	$(GO) mod tidy -diff
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo 'gofmt needed'; exit 1; }
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

# Every platform our users run: macOS and Windows builds must compile.
cross:
	GOOS=darwin GOARCH=arm64 $(GO) build ./...
	GOOS=windows GOARCH=amd64 $(GO) build ./...

bench:
	bash bench/run.sh

clean:
	rm -rf $(BIN)
