#!/usr/bin/env node
// The fake codex of test/fakes/fake-codex.mjs (scenarios chosen by the prompt's first word, e.g.
// `success`), plus the `--version` answer baton's start-up detection needs, so `baton start` finds
// it on PATH as `codex`.
if (process.argv[2] === '--version') {
  process.stdout.write('codex-cli 0.0.0-bench\n');
  process.exit(0);
}
await import('../../fakes/fake-codex.mjs');
