#!/usr/bin/env node
// Prints about `MB` MiB (argv[2]) of codex-shaped JSON lines on stdout, honouring backpressure,
// then a final answer and `turn.completed`: a fast, deterministic stand-in for a very chatty
// `codex exec --json`. The same argument always prints the same bytes (seeded generator), so two
// consumers can be compared on identical input. Lines vary from ~100 B to ~8 KiB, with escapes and
// non-ASCII text as real command output has.
const megabytes = Number(process.argv[2] ?? '1');
const targetBytes = Math.round(megabytes * 1024 * 1024);

let seed = 0x5eed;
const random = () => {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const pick = (list) => list[Math.floor(random() * list.length)];
const WORDS = [
  'src/app.ts',
  'PASS',
  'FAIL',
  'expected',
  'received',
  'const',
  'return',
  'npm',
  'test',
  'ok',
  '✓',
  'Größe',
  '"quoted"',
  'tab\there',
  'path\\to\\file',
  'función',
  '→',
  'line',
];
const text = (length) => {
  let out = '';
  while (out.length < length) out += `${pick(WORDS)}${random() < 0.15 ? '\n' : ' '}`;
  return out.slice(0, length);
};

const lines = [];
let blockBytes = 0;
let n = 0;
while (blockBytes < 1024 * 1024) {
  n += 1;
  const roll = random();
  let event;
  if (roll < 0.3) {
    event = {
      type: 'item.started',
      item: {
        id: `item_${n}`,
        type: 'command_execution',
        command: `bash -lc 'npm test -- ${text(20)}'`,
        aggregated_output: '',
        exit_code: null,
        status: 'in_progress',
      },
    };
  } else if (roll < 0.6) {
    event = {
      type: 'item.completed',
      item: {
        id: `item_${n}`,
        type: 'command_execution',
        command: 'bash -lc "npm test"',
        aggregated_output: text(50 + Math.floor(random() * 8000)),
        exit_code: random() < 0.8 ? 0 : 1,
        status: 'completed',
      },
    };
  } else if (roll < 0.85) {
    event = {
      type: 'item.completed',
      item: { id: `item_${n}`, type: 'reasoning', text: text(100 + Math.floor(random() * 1500)) },
    };
  } else if (roll < 0.95) {
    event = {
      type: 'item.completed',
      item: {
        id: `item_${n}`,
        type: 'file_change',
        changes: [{ path: `src/${text(8).replace(/\W/g, '')}.ts`, kind: 'update' }],
        status: 'completed',
      },
    };
  } else {
    event = {
      type: 'item.updated',
      item: {
        id: `item_${n}`,
        type: 'todo_list',
        items: [
          { text: text(40), completed: false },
          { text: text(30), completed: true },
        ],
      },
    };
  }
  const line = `${JSON.stringify(event)}\n`;
  lines.push(line);
  blockBytes += Buffer.byteLength(line);
}
const block = Buffer.from(lines.join(''));

const write = (chunk) =>
  new Promise((resolve) => (process.stdout.write(chunk) ? resolve() : process.stdout.once('drain', resolve)));
await write(`${JSON.stringify({ type: 'thread.started', thread_id: 'flood-thread-1' })}\n`);
for (let written = 0; written < targetBytes; written += block.length) await write(block);
await write(
  `${JSON.stringify({ type: 'item.completed', item: { id: 'final', type: 'agent_message', text: 'flood done' } })}\n`,
);
await write(
  `${JSON.stringify({ type: 'turn.completed', usage: { input_tokens: 10, cached_input_tokens: 0, output_tokens: 5, reasoning_output_tokens: 0 } })}\n`,
);
