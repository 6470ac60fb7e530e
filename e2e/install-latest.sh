#!/usr/bin/env bash
# Installs the newest published Claude Code (`@anthropic-ai/claude-code`) and
# Codex (`@openai/codex`) into a prefix of their own, beside the pinned
# versions that install-claude.sh and install-codex.sh put on PATH, and
# prints the directory of their binaries on stdout (the versions on stderr).
#
#   bash e2e/install-latest.sh [PREFIX]        # default /opt/taskie-latest
#   PATH="$(bash e2e/install-latest.sh):$PATH" go test -run '…' ./e2e
#
# The e2e tests find `claude` and `codex` on PATH, so that PATH runs them
# against the newest clients. Exit status: 0 when both run at the end, 1
# when the install failed or timed out, 2 when npm is missing.
set -euo pipefail

prefix="${1:-/opt/taskie-latest}"
limit="${INSTALL_TIMEOUT:-300}"
say() { printf 'install-latest: %s\n' "$*" >&2; }

if ! command -v npm >/dev/null 2>&1; then
	say "npm not found: install Node.js and npm first (e.g. apt-get install -y nodejs npm)"
	exit 2
fi
mkdir -p "$prefix"
say "installing @anthropic-ai/claude-code@latest and @openai/codex@latest into $prefix (at most ${limit}s)"
# --include=optional: Codex's native binary is an optional dependency.
if ! timeout "$limit" npm install --prefix "$prefix" --no-fund --no-audit --include=optional \
	@anthropic-ai/claude-code@latest @openai/codex@latest >&2; then
	say "npm install of the newest clients failed or timed out"
	exit 1
fi
bin="$prefix/node_modules/.bin"
# An npm that skips install scripts leaves Claude Code's placeholder binary:
# run the package's postinstall then (as install-claude.sh does).
if ! timeout 30 "$bin/claude" --version >/dev/null 2>&1; then
	(cd "$prefix/node_modules/@anthropic-ai/claude-code" && timeout 120 node install.cjs >&2) || true
fi
for c in claude codex; do
	if ! v="$(timeout 30 "$bin/$c" --version 2>/dev/null)"; then
		say "$bin/$c does not run after the install"
		exit 1
	fi
	say "newest $c: $v"
done
printf '%s\n' "$bin"
