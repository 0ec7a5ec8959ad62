#!/usr/bin/env node
// A stand-in for `codex` in the chat-channel E2E tests, which are about platforms, not the CLI
// (the real codex is covered by the Telegram E2E). It answers `--version` like codex does and,
// for `exec --json … [resume SESSION] -- PROMPT` (or `-- -` with the task on stdin), prints codex's JSON events: a new session id,
// or the resumed one; `long N` answers N characters over 100-character lines; anything else
// answers `done: PROMPT` (or `resumed SESSION: PROMPT`).
import { appendFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const argv = process.argv.slice(2);
// The environment baton gave this child, for the shared secret check (test/support/canaries.ts):
// linked as `<test dir>/bin/codex`, it writes `<test dir>/child-env.jsonl`.
try {
  appendFileSync(join(dirname(dirname(process.argv[1])), 'child-env.jsonl'), `${JSON.stringify(process.env)}\n`);
} catch {
  // Linked somewhere unwritable: nothing to record for.
}
if (argv[0] === '--version') {
  process.stdout.write('codex-cli 0.0.0-fake\n');
  process.exit(0);
}
const resumeAt = argv.indexOf('resume');
const resumed = resumeAt === -1 ? undefined : argv[resumeAt + 1];
// `-` (what baton passes since issue #15, as `codex exec -`): the task arrives on stdin.
let prompt = argv.at(-1) ?? '';
if (prompt === '-') {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  prompt = Buffer.concat(chunks).toString('utf8');
}
const emit = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);
emit({ type: 'thread.started', thread_id: resumed ?? `fake-session-${process.pid}-${Date.now()}` });
emit({ type: 'turn.started' });
// `hang`: a run that works until it is stopped (button and /stop tests).
if (prompt === 'hang') setInterval(() => undefined, 60_000);
else {
  const long = /^long (\d+)$/.exec(prompt);
  let text;
  if (long) {
    const total = Number(long[1]);
    const lines = [];
    for (let i = 0, used = 0; used < total; i++) {
      const line = `line ${String(i).padStart(4, '0')} `.padEnd(Math.min(99, total - used - 1), 'x');
      lines.push(line);
      used += line.length + 1;
    }
    text = lines.join('\n').padEnd(total, 'x').slice(0, total);
  } else {
    text = resumed ? `resumed ${resumed}: ${prompt}` : `done: ${prompt}`;
    // Images passed as `--image=FILE` are named, so a test sees what went with the task.
    const images = argv
      .filter((a) => a.startsWith('--image='))
      .map((a) => a.slice('--image='.length).split('/').at(-1));
    if (images.length > 0) text += ` [images: ${images.join(', ')}]`;
  }
  emit({ type: 'item.completed', item: { id: 'item_0', type: 'agent_message', text } });
  emit({
    type: 'turn.completed',
    usage: { input_tokens: 10, cached_input_tokens: 0, output_tokens: 5, reasoning_output_tokens: 0 },
  });
}
