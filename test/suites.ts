/**
 * Which test files are slow: `npm test` (vitest.config.ts) leaves these out, `npm run test:all`
 * (vitest.all.config.ts, what CI runs) adds them. A file is slow for what it needs (a PostgreSQL
 * server, Chromium, the built CLI as a process, a loopback HTTP server speaking a provider's wire
 * format) or for its measured duration (seconds of its own on an idle two-core machine).
 */
export const slowTests: readonly string[] = [
  // A throwaway PostgreSQL server (test/postgres/global-setup.ts starts it for test:all only).
  'test/store/postgres/fleet.test.ts',
  'test/store/postgres/store.test.ts',
  'test/store/postgres/chunk-runs.test.ts',
  'test/store/postgres/row-edits.test.ts',
  'test/store/postgres/migration.test.ts',
  'test/store/postgres/search.test.ts',
  'test/conformance/postgres.test.ts',
  'test/adapters/claude-agent-sdk/postgres.test.ts',
  // Killed agent workers and raw writers taken over on JSONL, SQLite and PostgreSQL.
  'test/agent/takeover.test.ts',
  // A worker killed inside a subagent's child agent, on JSONL, SQLite and PostgreSQL.
  'test/agent/subagent-crash.test.ts',
  'test/store/append-once-kill.test.ts',
  'test/store/redaction-kill.test.ts',
  // A real process moving a session to an archive, SIGKILLed at each step.
  'test/store/move-kill.test.ts',
  // Headless Chromium driving the viewer.
  'test/viewer/e2e.test.ts',
  'test/viewer/hostile.test.ts',
  'test/viewer/imported.test.ts',
  'test/viewer/redacted.test.ts',
  'test/viewer/subagents.test.ts',
  'test/viewer/conversation.test.ts',
  'test/viewer/trace.test.ts',
  'test/viewer/session-panel.test.ts',
  'test/viewer/keys.test.ts',
  // A real trace backend (Fiberplane Studio, test/adapters/otel/backend/) receiving OTLP/HTTP.
  'test/adapters/otel/backend.test.ts',
  // The built `palimpsest` binary run as a process, end to end (PostgreSQL too, for some).
  'test/cli/cli.test.ts',
  'test/cli/cost.test.ts',
  'test/cli/subagents.test.ts',
  'test/cli/damaged.test.ts',
  'test/cli/error-exits.test.ts',
  'test/cli/follow.test.ts',
  'test/cli/gc.test.ts',
  'test/cli/ls-summary.test.ts',
  'test/cli/postgres.test.ts',
  'test/cli/run-wire.test.ts',
  'test/cli/salvage.test.ts',
  'test/cli/unlock.test.ts',
  'test/cli/session-ids.test.ts',
  'test/cli/otel.test.ts',
  'test/cli/governance.test.ts',
  'test/cli/encryption.test.ts',
  'test/cli/mcp.test.ts',
  'test/cli/search.test.ts',
  'test/import/cli.test.ts',
  'test/import/forks.test.ts',
  // npm pack and a consumer's type check of the packed package (36 s).
  'test/package/packaging.test.ts',
  // Every TSDoc example type-checked by the compiler and run (11 s).
  'test/docs/tsdoc-examples.test.ts',
  // examples/subagents.ts run as a process (tsx), as `npm run example:subagents` runs it.
  'test/docs/subagents-example.test.ts',
  // The real Claude Code (the Claude Agent SDK's binary) run against a loopback Anthropic API.
  'test/adapters/claude-agent-sdk/transcript-store.test.ts',
  'test/adapters/claude-agent-sdk/export.test.ts',
  // The real Codex CLI (@openai/codex) resuming rollouts against a loopback Responses API.
  'test/import/codex-resume.test.ts',
  // Loopback servers replaying a provider's wire format to its real client package.
  'test/agent/wire-server.test.ts',
  'test/agent/wire-openai-compatible.test.ts',
  'test/agent/wire-deepseek.test.ts',
  'test/agent/wire-anthropic.test.ts',
  'test/agent/wire-fidelity.test.ts',
  'test/agent/wire-loop.test.ts',
  'test/agent/wire-stream.test.ts',
  'test/agent/overflow.test.ts',
  'test/adapters/ai-sdk/wire.test.ts',
  'test/adapters/ai-sdk/providers.test.ts',
  'test/adapters/openai-agents/runner.test.ts',
  'test/adapters/openai-agents/compaction.test.ts',
  // Real MCP servers in child processes (stdio and loopback HTTP), some killed mid-call.
  'test/adapters/mcp/process.test.ts',
  // A loopback HTTP server answering the SDK's client and raw requests.
  'test/adapters/mcp/http.test.ts',
  // Processes killed or contending: lock heartbeats and takeovers, SIGKILL at failpoints.
  'test/store/lock-heartbeat.test.ts',
  'test/store/sqlite/contention.test.ts',
  'test/store/sqlite/locks.test.ts',
  'test/store/sqlite/ledger-kill.test.ts',
  'test/store/jsonl/crash.test.ts',
  'test/agent/resume.test.ts',
  'test/agent/store-resume.test.ts',
];
