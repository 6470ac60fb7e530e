#!/usr/bin/env bash
# Installs the Codex CLI (`codex`) from npm when it is not on PATH, for the
# real-client end-to-end tests in e2e/ (e2e/codex_test.go), and prints its
# version.
#
#   bash e2e/install-codex.sh            # install if missing
#   CODEX_VERSION=x.y.z bash e2e/install-codex.sh
#   INSTALL_TIMEOUT=300 bash e2e/install-codex.sh
#
# A `codex` already on PATH is left alone (a different version only gets a
# note). The npm package is a small launcher; the native binary comes in the
# platform package npm installs as an optional dependency
# (@openai/codex@<version>-linux-x64 and so on). Exit status: 0 when
# `codex --version` works at the end, 1 when the install failed or timed out,
# 2 when npm is missing.
set -euo pipefail

# The version the e2e tests were written and run against.
version="${CODEX_VERSION:-0.169.0}"
limit="${INSTALL_TIMEOUT:-300}"
pkg="@openai/codex"

say() { printf 'install-codex: %s\n' "$*" >&2; }

if command -v codex >/dev/null 2>&1; then
	have="$(timeout 30 codex --version 2>/dev/null || true)"
	if [ -n "$have" ]; then
		case "$have" in
		*"$version"*) ;;
		*) say "note: $(command -v codex) is $have; the e2e tests were written against $version" ;;
		esac
		printf '%s\n' "$have"
		exit 0
	fi
	say "$(command -v codex) does not run; reinstalling $pkg@$version"
fi

if ! command -v npm >/dev/null 2>&1; then
	say "npm not found: install Node.js and npm first (e.g. apt-get install -y nodejs npm)"
	exit 2
fi

say "installing $pkg@$version with npm (at most ${limit}s)"
# --include=optional: the native binary is an optional dependency, and an
# npm configured with omit=optional would install a launcher that cannot run.
if ! timeout "$limit" npm install -g --no-fund --no-audit --include=optional "$pkg@$version" >&2; then
	say "npm install -g $pkg@$version failed or timed out"
	exit 1
fi

if ! have="$(timeout 30 codex --version 2>/dev/null)"; then
	say "codex does not run after installing $pkg@$version (is the platform package for $(uname -sm) missing?)"
	exit 1
fi
printf '%s\n' "$have"
