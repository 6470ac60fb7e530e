// Package agentpkg holds the tests of the agent packages: the Claude Code
// plugin (plugin/, .claude-plugin/) and the Codex prompts and hooks (codex/).
// They check that the manifests parse, that every action has its command and
// its Codex prompt, that the hooks are registered, that the generated Codex
// prompts are current, and that every `taskie …` invocation the prompts and
// READMEs tell an agent to run is a real command with real flags, by asking
// the freshly built binary's --help.
package agentpkg
