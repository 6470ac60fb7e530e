// Package agentpkg holds the tests of the agent packages: the Claude Code
// plugin (plugin/, .claude-plugin/) and the Codex skills and hooks (codex/).
// They check that the manifests parse, that every action has its command and
// its Codex skill, that the hooks are registered, that the generated Codex
// skills are current, and that every `taskie …` invocation the prompts,
// skills and READMEs tell an agent to run is a real command with real flags,
// by asking the freshly built binary's --help.
package agentpkg
