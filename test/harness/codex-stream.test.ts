import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { JsonLineDecoder, type JsonLine } from '../../src/harness/json-lines.js';
import { classifyExit } from '../../src/harness/outcome.js';
import { codexVendor, untrustedProjects } from '../../src/harness/vendors/codex.js';

// Copied from shared/fixtures/vendor-streams (real CLI captures) so a clone is self-contained.
const FIXTURES = new URL('../fixtures/vendor-streams/', import.meta.url);
const fixture = (name: string): Buffer => readFileSync(new URL(name, FIXTURES));

/** Feeds `bytes` to a decoder in chunks of `size` bytes and reduces every event with codex's reducer. */
function reduce(bytes: Buffer, size = bytes.length) {
  const decoder = new JsonLineDecoder(1_048_576);
  const reducer = codexVendor.newReducer();
  const lines: JsonLine[] = [];
  for (let i = 0; i < bytes.length; i += size) lines.push(...decoder.push(bytes.subarray(i, i + size)));
  lines.push(...decoder.end());
  for (const line of lines) if (line.kind === 'event') reducer.push(line.value);
  return { lines, facts: reducer.facts() };
}

const clean = { exitCode: 0, signal: null, timedOut: false };

describe('codex stream on real lines', () => {
  it('reads session, final message and usage from a successful run', () => {
    const { lines, facts } = reduce(fixture('codex-success.jsonl'));
    expect(lines.every((l) => l.kind === 'event')).toBe(true);
    expect(facts).toMatchObject({
      sessionId: '01a22627-cbb0-73b3-8769-cdfe062edd25',
      finalMessage: 'All done: fixed the bug.',
      usage: { inputTokens: 1200, cachedInputTokens: 200, outputTokens: 300, reasoningOutputTokens: 40 },
      terminal: { kind: 'completed' },
    });
    expect(classifyExit(facts, clean)).toEqual({ status: 'completed', reason: null, errorMessage: null });
  });

  it('gives the same facts whatever the chunk size, down to one byte', () => {
    const bytes = fixture('codex-items.jsonl');
    const whole = reduce(bytes).facts;
    for (const size of [1, 2, 3, 7, 64, 333]) expect(reduce(bytes, size).facts).toEqual(whole);
    expect(whole.terminal).toEqual({ kind: 'completed' });
  });

  it('treats error lines as notices and turn.failed as the failure, with the vendor words', () => {
    const { facts } = reduce(fixture('codex-http-401.jsonl'));
    expect(facts.notices.some((n) => n.startsWith('Reconnecting... 1/5'))).toBe(true);
    expect(facts.terminal).toEqual({
      kind: 'failed',
      message:
        'unexpected status 401 Unauthorized: Incorrect API key provided, url: http://127.0.0.1:18200/v1/responses',
    });
    expect(classifyExit(facts, { ...clean, exitCode: 1 })).toMatchObject({ status: 'failed', reason: 'vendor_error' });
  });

  it('fails a stream that ends without a terminal event, even on exit code 0', () => {
    const lines = fixture('codex-http-500.jsonl').toString('utf8').split('\n');
    const cut = Buffer.from(lines.filter((l) => !l.includes('turn.failed')).join('\n'));
    const { facts } = reduce(cut);
    expect(facts.terminal).toBeUndefined();
    expect(classifyExit(facts, clean)).toMatchObject({ status: 'failed', reason: 'no_terminal_event' });
  });

  it('keeps the resumed session id', () => {
    const { facts } = reduce(fixture('codex-resume.jsonl'));
    expect(facts.sessionId).toBeDefined();
    expect(facts.terminal).toEqual({ kind: 'completed' });
  });
});

describe('JsonLineDecoder', () => {
  it('reassembles a line split across chunks', () => {
    const decoder = new JsonLineDecoder(1024);
    expect(decoder.push(Buffer.from('{"type":"thread.st'))).toEqual([]);
    expect(decoder.push(Buffer.from('arted","thread_id":"t1"}\n{"a"'))).toEqual([
      {
        kind: 'event',
        value: { type: 'thread.started', thread_id: 't1' },
        raw: '{"type":"thread.started","thread_id":"t1"}',
        bytes: Buffer.from('{"type":"thread.started","thread_id":"t1"}\n'),
      },
    ]);
    expect(decoder.end()).toMatchObject([{ kind: 'framing_error', error: 'not_json' }]);
  });

  it('decodes a multi-byte character split across chunks', () => {
    const bytes = Buffer.from('{"type":"item.completed","item":{"type":"agent_message","text":"héllo 😀 done"}}\n');
    const emoji = bytes.indexOf(Buffer.from('😀'));
    const decoder = new JsonLineDecoder(1024);
    const out = [
      ...decoder.push(bytes.subarray(0, emoji + 2)),
      ...decoder.push(bytes.subarray(emoji + 2, emoji + 3)),
      ...decoder.push(bytes.subarray(emoji + 3)),
    ];
    expect(out).toHaveLength(1);
    expect((out[0] as { value: { item: { text: string } } }).value.item.text).toBe('héllo 😀 done');
  });

  it('reports an over-long line as one framing error and recovers on the next line', () => {
    const decoder = new JsonLineDecoder(100);
    const out = [
      ...decoder.push(Buffer.from(`{"x":"${'a'.repeat(80)}`)),
      ...decoder.push(Buffer.from(`${'a'.repeat(500)}"}\n{"type":"turn.started"}\n`)),
    ];
    expect(out).toHaveLength(2);
    expect(out[0]).toMatchObject({ kind: 'framing_error', error: 'too_long', bytes: 588 });
    expect(out[1]).toMatchObject({ kind: 'event', value: { type: 'turn.started' } });
  });

  it('treats a JSON scalar or a non-JSON line as a framing error and skips blank lines', () => {
    const decoder = new JsonLineDecoder(100);
    expect(decoder.push(Buffer.from('42\n\nReading additional input from stdin...\n')).map((l) => l.kind)).toEqual([
      'framing_error',
      'framing_error',
    ]);
  });
});

describe('codex argv', () => {
  const ctx = { cwd: '/home/dev/app' };
  const untrusted =
    'projects={"/home/dev/app"={trust_level="untrusted"},"/home/dev"={trust_level="untrusted"},"/home"={trust_level="untrusted"},"/"={trust_level="untrusted"}}';

  it('reads the prompt from stdin (`-` after --), exec flags before resume', () => {
    expect(codexVendor.buildArgv({ prompt: '-rf', model: 'm1', posture: 'read-only' }, ctx)).toEqual([
      'exec',
      '--json',
      '--skip-git-repo-check',
      '-c',
      untrusted,
      '-m',
      'm1',
      '--sandbox',
      'read-only',
      '--',
      '-',
    ]);
    expect(codexVendor.buildArgv({ prompt: 'go on', posture: 'workspace-write', resumeSessionId: 'abc' }, ctx)).toEqual(
      [
        'exec',
        '--json',
        '--skip-git-repo-check',
        '-c',
        untrusted,
        '-c',
        'sandbox_mode="workspace-write"',
        'resume',
        'abc',
        '--',
        '-',
      ],
    );
    expect(codexVendor.resumeCommand('/home/dev/my app', 'abc')).toBe(
      "cd '/home/dev/my app' && codex exec resume abc --json",
    );
  });

  it('sends the prompt as is on stdin, never on argv', async () => {
    expect(await codexVendor.stdinPayload({ prompt: '-rf --help' })).toBe('-rf --help');
    expect(codexVendor.buildArgv({ prompt: 'a task', resumeSessionId: 'abc' }, ctx).join(' ')).not.toContain('a task');
  });

  it('marks every directory from the cwd up untrusted, quoting any path as a TOML string', () => {
    expect(untrustedProjects('/')).toBe('projects={"/"={trust_level="untrusted"}}');
    expect(untrustedProjects('/a "b"/c.d')).toBe(
      'projects={"/a \\"b\\"/c.d"={trust_level="untrusted"},"/a \\"b\\""={trust_level="untrusted"},"/"={trust_level="untrusted"}}',
    );
  });
});

describe('codex refused credentials', () => {
  // Recorded from codex 0.171.0 with no login against a server answering 401 (test/fakes/fake-openai.ts).
  const retry = {
    type: 'error',
    message:
      'Reconnecting... 1/5 (unexpected status 401 Unauthorized: Missing bearer or basic authentication in header, url: http://127.0.0.1:33993/v1/responses)',
  };
  const failed = {
    type: 'turn.failed',
    error: {
      message:
        'unexpected status 401 Unauthorized: Missing bearer or basic authentication in header, url: http://127.0.0.1:33993/v1/responses',
    },
  };

  it('finds the 401 in a retry, a turn.failed and stderr, and nothing in other errors', () => {
    const words =
      'unexpected status 401 Unauthorized: Missing bearer or basic authentication in header, url: http://127.0.0.1:33993/v1/responses';
    expect(codexVendor.describeAuthFailure!({ event: retry })).toBe(words);
    expect(codexVendor.describeAuthFailure!({ event: failed })).toBe(words);
    expect(codexVendor.describeAuthFailure!({ stderr: 'Error: not logged in\n' })).toBe('Error: not logged in');
    expect(
      codexVendor.describeAuthFailure!({
        event: { type: 'error', message: 'Reconnecting... 1/5 (unexpected status 500 Internal Server Error)' },
      }),
    ).toBeUndefined();
    expect(
      codexVendor.describeAuthFailure!({
        event: { type: 'item.completed', item: { type: 'agent_message', text: '401 Unauthorized' } },
      }),
    ).toBeUndefined();
  });

  it("takes no other server's 401 for codex's own login (a good run would be ended not_logged_in)", () => {
    // A remote MCP server of the user's codex config whose token expired: codex reports it and the run goes on.
    const mcp =
      'MCP client for `docs` failed to start: HTTP status client error (401 Unauthorized) for url (https://mcp.example.com/mcp)';
    expect(codexVendor.describeAuthFailure!({ event: { type: 'error', message: mcp } })).toBeUndefined();
    expect(
      codexVendor.describeAuthFailure!({ event: { type: 'item.completed', item: { type: 'error', message: mcp } } }),
    ).toBeUndefined();
  });

  it('ends the run failed/not_logged_in with the words and the fix', () => {
    const reducer = codexVendor.newReducer();
    reducer.push(retry);
    const fix = codexVendor.loginFix!('/home/u/.codex');
    expect(fix).toContain('CODEX_HOME=/home/u/.codex codex login');
    expect(
      classifyExit(reducer.facts(), {
        exitCode: null,
        signal: 'SIGINT',
        timedOut: false,
        authFailure: { words: 'unexpected status 401 Unauthorized', fix },
      }),
    ).toEqual({
      status: 'failed',
      reason: 'not_logged_in',
      errorMessage: `The CLI is not logged in or its credentials were refused (unexpected status 401 Unauthorized); the run was stopped, since retrying cannot help. ${fix}`,
    });
  });
});
