#!/usr/bin/env bash
# Installs the Claude Code CLI (`claude`) from npm when it is not on PATH,
# for the real-client end-to-end tests in e2e/, and prints its version.
#
#   bash e2e/install-claude.sh            # install if missing
#   CLAUDE_CODE_VERSION=x.y.z bash e2e/install-claude.sh
#   INSTALL_TIMEOUT=300 bash e2e/install-claude.sh
#
# A `claude` already on PATH is left alone (a different version only gets
# a note). Exit status: 0 when `claude --version` works at the end, 1 when
# the install failed or timed out, 2 when npm is missing.
set -euo pipefail

# The version the e2e tests were written and run against.
version="${CLAUDE_CODE_VERSION:-2.1.197}"
limit="${INSTALL_TIMEOUT:-300}"
pkg="@anthropic-ai/claude-code"

say() { printf 'install-claude: %s\n' "$*" >&2; }

if command -v claude >/dev/null 2>&1; then
	have="$(timeout 30 claude --version 2>/dev/null || true)"
	if [ -n "$have" ]; then
		case "$have" in
		"$version"*) ;;
		*) say "note: $(command -v claude) is $have; the e2e tests were written against $version" ;;
		esac
		printf '%s\n' "$have"
		exit 0
	fi
	say "$(command -v claude) does not run; reinstalling $pkg@$version"
fi

if ! command -v npm >/dev/null 2>&1; then
	say "npm not found: install Node.js and npm first (e.g. apt-get install -y nodejs npm)"
	exit 2
fi

say "installing $pkg@$version with npm (at most ${limit}s)"
if ! timeout "$limit" npm install -g --no-fund --no-audit "$pkg@$version" >&2; then
	say "npm install -g $pkg@$version failed or timed out"
	exit 1
fi

# The package's postinstall puts the native binary in place of its
# placeholder. An npm that skips install scripts leaves the placeholder:
# run the postinstall ourselves then.
if ! timeout 30 claude --version >/dev/null 2>&1; then
	dir="$(npm root -g)/$pkg"
	say "claude does not run after the install; running the package's postinstall in $dir"
	(cd "$dir" && timeout 120 node install.cjs >&2) || true
fi

if ! have="$(timeout 30 claude --version 2>/dev/null)"; then
	say "claude still does not run after installing $pkg@$version"
	exit 1
fi
printf '%s\n' "$have"
