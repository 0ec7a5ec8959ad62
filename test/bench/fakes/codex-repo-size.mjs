#!/usr/bin/env node
// A fake `codex exec --json` for the repository-size bench: with the task `edit <file> <stamp>`
// (on stdin as `-`, as baton sends it) it changes one file of the run's repository, completes,
// and writes the wall-clock time (ms since the epoch, fractional) it exits at to `<stamp>`, which
// the bench sets beside the outcome message's arrival at the fake Bot API.
import { readFileSync, writeFileSync } from 'node:fs';

if (process.argv[2] === '--version') {
  process.stdout.write('codex-cli 0.0.0-bench\n');
  process.exit(0);
}
let prompt = process.argv.at(-1) ?? '';
if (prompt === '-') prompt = readFileSync(0, 'utf8');
const [, file, stamp] = prompt.trim().split(' ');
writeFileSync(file, `changed by the run at ${Date.now()}\n`);
const emit = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);
emit({ type: 'thread.started', thread_id: 'fake-thread-repo-size' });
emit({ type: 'item.completed', item: { id: 'item_1', type: 'agent_message', text: 'edited one file' } });
emit({
  type: 'turn.completed',
  usage: { input_tokens: 10, cached_input_tokens: 0, output_tokens: 5, reasoning_output_tokens: 0 },
});
process.on('exit', () => writeFileSync(stamp, String(performance.timeOrigin + performance.now())));
