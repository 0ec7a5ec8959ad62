import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { JsonLineDecoder, type JsonLine } from '../../src/harness/json-lines.js';
import { classifyExit } from '../../src/harness/outcome.js';
import { claudeVendor } from '../../src/harness/vendors/claude.js';

// Real captures of claude 2.1.197 (test/fixtures/vendor-streams/README.md gives each exit code).
const FIXTURES = new URL('../fixtures/vendor-streams/', import.meta.url);
const fixture = (name: string): Buffer => readFileSync(new URL(name, FIXTURES));

/** Feeds `bytes` to a decoder in chunks of `size` bytes and reduces every event with claude's reducer. */
function reduce(bytes: Buffer, size = bytes.length) {
  const decoder = new JsonLineDecoder(1_048_576);
  const reducer = claudeVendor.newReducer();
  const lines: JsonLine[] = [];
  for (let i = 0; i < bytes.length; i += size) lines.push(...decoder.push(bytes.subarray(i, i + size)));
  lines.push(...decoder.end());
  for (const line of lines) if (line.kind === 'event') reducer.push(line.value);
  return { lines, facts: reducer.facts() };
}

/** Reduces hand-written events (shapes taken from the captures). */
function reduceEvents(events: unknown[]) {
  const reducer = claudeVendor.newReducer();
  for (const event of events) reducer.push(event);
  return reducer.facts();
}

const exited = (exitCode: number) => ({ exitCode, signal: null, timedOut: false });

describe('claude stream on real captures', () => {
  it('claude-success (rc 0): session, answer, usage with cache and cost, completed', () => {
    const { lines, facts } = reduce(fixture('claude-success.jsonl'));
    expect(lines.every((l) => l.kind === 'event')).toBe(true);
    expect(facts).toEqual({
      sessionId: '5f29de91-1784-47e7-903b-4651c061de2e',
      finalMessage: 'All done: fixed the bug.',
      // 1000 uncached + 50 cache creation + 100 cache read.
      usage: { inputTokens: 1150, cachedInputTokens: 100, outputTokens: 20, costUsd: 0.0058625 },
      terminal: { kind: 'completed' },
      notices: [],
      eventCount: 3,
      // The live status's facts (issue #14): no tool started, the tokens reported so far.
      live: { step: undefined, recentSteps: [], filesChanged: [], tokens: 1170 },
    });
    expect(classifyExit(facts, exited(0))).toEqual({ status: 'completed', reason: null, errorMessage: null });
  });

  it('claude-tool-use (rc 0): completes and reports the denied Bash call', () => {
    const { facts } = reduce(fixture('claude-tool-use.jsonl'));
    expect(facts).toMatchObject({
      sessionId: '2bac110d-d2fd-4275-9c88-bf8bcc1ad62d',
      finalMessage: 'All done: fixed the bug.',
      usage: { inputTokens: 2300, cachedInputTokens: 200, outputTokens: 70, costUsd: 0.012475 },
      terminal: { kind: 'completed' },
    });
    expect(facts.denials).toEqual([{ tool: 'Bash', detail: 'echo hi from bash > b.txt; cat b.txt' }]);
    expect(facts.notices).toEqual([]);
    expect(classifyExit(facts, exited(0))).toEqual({ status: 'completed', reason: null, errorMessage: null });
  });

  it('claude-http-401 (rc 1): is_error wins over subtype "success"; retries are notices', () => {
    const { facts } = reduce(fixture('claude-http-401.jsonl'));
    expect(facts.terminal).toEqual({
      kind: 'failed',
      message: 'Failed to authenticate. API Error: 401 fake authentication_error',
    });
    expect(facts.notices).toHaveLength(10);
    expect(facts.notices[0]).toBe('API retry 1/10: 401 authentication_failed');
    // The synthetic assistant message is the CLI's error text, not the run's answer.
    expect(facts.finalMessage).toBeUndefined();
    expect(facts.sessionId).toBe('5ab7b46e-5402-40c5-9f50-c136a710c7cf');
    expect(classifyExit(facts, exited(1))).toEqual({
      status: 'failed',
      reason: 'vendor_error',
      errorMessage: 'Failed to authenticate. API Error: 401 fake authentication_error',
    });
  });

  it('claude-max-turns (rc 1): errors[] are the words when there is no result text', () => {
    const { facts } = reduce(fixture('claude-max-turns.jsonl'));
    expect(facts.terminal).toEqual({
      kind: 'failed',
      message: 'Reached maximum number of turns (2)',
      reason: 'max_turns',
    });
    expect(facts.usage).toEqual({ inputTokens: 2300, cachedInputTokens: 200, outputTokens: 100, costUsd: 0.013225 });
    expect(facts.finalMessage).toBeUndefined();
    expect(classifyExit(facts, exited(1))).toEqual({
      status: 'failed',
      reason: 'max_turns',
      errorMessage: 'Reached maximum number of turns (2)',
    });
  });

  it.each(['claude-success.jsonl', 'claude-tool-use.jsonl', 'claude-http-401.jsonl', 'claude-max-turns.jsonl'])(
    '%s gives the same facts whatever the chunk size, down to one byte',
    (name) => {
      const bytes = fixture(name);
      const whole = reduce(bytes).facts;
      for (const size of [1, 2, 3, 7, 64, 333, 4096]) expect(reduce(bytes, size).facts).toEqual(whole);
      expect(whole.terminal).toBeDefined();
    },
  );

  it('fails a stream cut before its result line, even on exit code 0', () => {
    const lines = fixture('claude-success.jsonl').toString('utf8').split('\n');
    const { facts } = reduce(Buffer.from(lines.filter((l) => !l.startsWith('{"type":"result"')).join('\n')));
    expect(facts.terminal).toBeUndefined();
    expect(facts.finalMessage).toBe('All done: fixed the bug.');
    expect(classifyExit(facts, exited(0))).toMatchObject({ status: 'failed', reason: 'no_terminal_event' });
  });

  it('lets a result that reports success still fail on a non-zero exit', () => {
    const { facts } = reduce(fixture('claude-success.jsonl'));
    expect(classifyExit(facts, exited(1))).toMatchObject({ status: 'failed', reason: 'exit_status' });
  });
});

describe('claude reducer on edge shapes', () => {
  const init = { type: 'system', subtype: 'init', session_id: 's-1' };

  it('judges by the last result: a later failed turn fails the run in its own words', () => {
    const facts = reduceEvents([
      init,
      { type: 'result', subtype: 'success', is_error: false, result: 'first' },
      { type: 'result', subtype: 'success', is_error: true, result: 'API Error: 500 overloaded' },
    ]);
    expect(facts.terminal).toEqual({ kind: 'failed', message: 'API Error: 500 overloaded' });
    expect(facts.finalMessage).toBe('first');
    expect(classifyExit(facts, exited(1))).toEqual({
      status: 'failed',
      reason: 'vendor_error',
      errorMessage: 'API Error: 500 overloaded',
    });
  });

  it('a later successful result completes a run whose earlier turn failed', () => {
    const facts = reduceEvents([
      init,
      { type: 'result', subtype: 'error_during_execution', is_error: true, errors: ['interrupted'] },
      {
        type: 'assistant',
        parent_tool_use_id: null,
        message: { model: 'm', content: [{ type: 'text', text: 'background job done' }] },
      },
      { type: 'result', subtype: 'success', is_error: false, result: 'background job done' },
    ]);
    expect(classifyExit(facts, exited(0))).toEqual({ status: 'completed', reason: null, errorMessage: null });
    expect(facts.finalMessage).toBe('background job done');
  });

  it('fails a non-success subtype even without is_error, in the subtype words when nothing else is given', () => {
    // SIGINT while streaming ends `error_during_execution` with rc 0 (VENDOR-CLI.md).
    const facts = reduceEvents([init, { type: 'result', subtype: 'error_during_execution', is_error: false }]);
    expect(facts.terminal).toEqual({ kind: 'failed', message: 'claude stopped with an error during execution.' });
    expect(classifyExit(facts, exited(0))).toMatchObject({ status: 'failed', reason: 'vendor_error' });
  });

  it('reads the session id from a result when no init came (resume of an unknown id)', () => {
    // Measured on 2.1.197: `--resume <unknown>` prints only this result line, rc 1.
    const facts = reduceEvents([
      {
        type: 'result',
        subtype: 'error_during_execution',
        is_error: true,
        session_id: 'gone',
        errors: ['No conversation found with session ID: gone'],
      },
    ]);
    expect(facts).toMatchObject({
      sessionId: 'gone',
      terminal: { kind: 'failed', message: 'No conversation found with session ID: gone' },
    });
  });

  it('keeps the last top-level text, ignoring sub-agent and tool-only messages', () => {
    const facts = reduceEvents([
      init,
      {
        type: 'assistant',
        parent_tool_use_id: null,
        message: {
          model: 'm',
          content: [
            { type: 'text', text: 'Plan: ' },
            { type: 'text', text: 'edit a.ts' },
          ],
        },
      },
      {
        type: 'assistant',
        parent_tool_use_id: 'toolu_1',
        message: { model: 'm', content: [{ type: 'text', text: 'sub-agent chatter' }] },
      },
      {
        type: 'assistant',
        parent_tool_use_id: null,
        message: { model: 'm', content: [{ type: 'tool_use', name: 'Bash', input: {} }] },
      },
    ]);
    expect(facts.finalMessage).toBe('Plan: \n\nedit a.ts');
    expect(facts.terminal).toBeUndefined();
  });

  it('tolerates unknown types, non-objects and missing fields', () => {
    const facts = reduceEvents([
      init,
      { type: 'stream_event' },
      { type: 'system', subtype: 'compact_boundary' },
      'x',
      null,
      [],
      { type: 'result' },
    ]);
    expect(facts.eventCount).toBe(7);
    expect(facts.terminal).toEqual({ kind: 'failed', message: 'claude printed a result without is_error.' });
    expect(facts.usage).toBeUndefined();
  });

  it('names each denied tool and shortens long commands to one line', () => {
    const long = `echo ${'x'.repeat(300)}\nrm -rf build`;
    const facts = reduceEvents([
      init,
      {
        type: 'result',
        subtype: 'success',
        is_error: false,
        result: 'done',
        permission_denials: [
          { tool_name: 'Write', tool_input: { file_path: '/repo/a.txt', content: 'x' } },
          { tool_name: 'Bash', tool_input: { command: long } },
          { tool_name: 'WebFetch' },
        ],
      },
    ]);
    expect(facts.denials?.[0]).toEqual({ tool: 'Write', detail: '/repo/a.txt' });
    expect(facts.denials?.[1]?.detail).toMatch(/^echo x{20,}…$/);
    expect(facts.denials?.[1]?.detail?.length).toBeLessThanOrEqual(160);
    expect(facts.denials?.[2]).toEqual({ tool: 'WebFetch' });
  });

  it('keeps at most 20 notices, newest last', () => {
    const retries = Array.from({ length: 25 }, (_, i) => ({
      type: 'system',
      subtype: 'api_retry',
      attempt: i + 1,
      max_retries: 25,
      error_status: 529,
    }));
    const facts = reduceEvents([init, ...retries]);
    expect(facts.notices).toHaveLength(20);
    expect(facts.notices.at(-1)).toBe('API retry 25/25: 529');
  });

  it('hands out a copy of its facts', () => {
    const reducer = claudeVendor.newReducer();
    reducer.push({ type: 'system', subtype: 'api_retry', attempt: 1 });
    reducer.facts().notices.push('tampered');
    expect(reducer.facts().notices).toEqual(['API retry 1']);
  });
});

describe('claude progress milestones', () => {
  const progress = (event: unknown) => claudeVendor.describeProgress?.(event);
  const toolUse = (name: string, input: unknown) => ({
    type: 'assistant',
    parent_tool_use_id: null,
    message: { model: 'm', content: [{ type: 'tool_use', id: 't', name, input }] },
  });

  it('names the Bash command of the captured tool-use run and nothing else there', () => {
    const events = fixture('claude-tool-use.jsonl')
      .toString('utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as unknown);
    expect(events.map(progress).filter((m) => m !== undefined)).toEqual([
      'running echo hi from bash > b.txt; cat b.txt',
    ]);
  });

  it('describes writes, edits, web access, sub-agents and MCP tools; skips reads', () => {
    expect(progress(toolUse('Write', { file_path: '/r/a.ts', content: 'x' }))).toBe('writing /r/a.ts');
    expect(progress(toolUse('Edit', { file_path: '/r/a.ts' }))).toBe('editing /r/a.ts');
    expect(progress(toolUse('WebSearch', { query: 'vitest hooks' }))).toBe('searched the web for vitest hooks');
    expect(progress(toolUse('WebFetch', { url: 'https://example.org' }))).toBe('fetching https://example.org');
    expect(progress(toolUse('Agent', { description: 'Explore the repo' }))).toBe(
      'started a sub-agent: Explore the repo',
    );
    expect(progress(toolUse('mcp__github__create_issue', {}))).toBe('tool github/create_issue');
    expect(progress(toolUse('Read', { file_path: '/r/a.ts' }))).toBeUndefined();
    expect(progress(toolUse('Bash', { command: '' }))).toBeUndefined();
    expect(progress(toolUse('Bash', { command: `npm test ${'-'.repeat(200)}` }))).toMatch(/^running npm test -+…$/);
    expect(progress({ type: 'result', is_error: false })).toBeUndefined();
    expect(progress(null)).toBeUndefined();
  });
});

describe('claude argv, env and resume command', () => {
  const ctx = { cwd: '/home/dev/app' };
  const pinned = [
    '-p',
    '--output-format=stream-json',
    '--verbose',
    '--setting-sources=user',
    '--settings={"permissions":{"disableBypassPermissionsMode":"disable"}}',
  ];

  it('passes manual (2.1.332) as default, the name both 2.1.197 and 2.1.332 accept', () => {
    expect(claudeVendor.buildArgv({ prompt: 'p', posture: 'manual' }, ctx)).toContain('--permission-mode=default');
    expect(claudeVendor.buildArgv({ prompt: 'p', posture: 'default' }, ctx)).toContain('--permission-mode=default');
  });

  it('puts every flag in --flag=value form and reads the task as a stream-json message on stdin', () => {
    expect(claudeVendor.buildArgv({ prompt: 'fix the bug' }, ctx)).toEqual([...pinned, '--input-format=stream-json']);
    expect(
      claudeVendor.buildArgv(
        { prompt: '-rf --help', model: 'claude-sonnet-4-5', posture: 'acceptEdits', resumeSessionId: 'abc-1' },
        ctx,
      ),
    ).toEqual([
      ...pinned,
      '--model=claude-sonnet-4-5',
      '--permission-mode=acceptEdits',
      '--resume=abc-1',
      '--input-format=stream-json',
    ]);
  });

  it('sends the task on stdin as one stream-json user message, never on argv', async () => {
    const payload = await claudeVendor.stdinPayload({ prompt: '-rf --help\nline two' });
    expect(payload.endsWith('\n')).toBe(true);
    expect(payload.slice(0, -1)).not.toContain('\n');
    expect(JSON.parse(payload)).toEqual({
      type: 'user',
      message: { role: 'user', content: [{ type: 'text', text: '-rf --help\nline two' }] },
    });
    expect(claudeVendor.buildArgv({ prompt: 'a task' }, ctx).join(' ')).not.toContain('a task');
  });

  it('declares only CLAUDE_CONFIG_DIR, never an API key', () => {
    expect(claudeVendor.vendorEnv({ codexHome: '/c', claudeConfigDir: '/home/dev/.claude' })).toEqual({
      CLAUDE_CONFIG_DIR: '/home/dev/.claude',
    });
  });

  it('prints a paste-able resume command', () => {
    expect(claudeVendor.resumeCommand('/home/dev/my app', 'abc-1')).toBe(
      "cd '/home/dev/my app' && claude --resume abc-1",
    );
    expect(claudeVendor.name).toBe('claude');
    expect(claudeVendor.binaryName).toBe('claude');
  });
});

// Real captures of claude 2.1.197 and 2.1.332 against a loopback fake Messages API (README there).
const VERSIONS = ['claude-2.1.197-more', 'claude-2.1.332'] as const;

describe.each(VERSIONS)('claude stream, %s captures', (dir) => {
  const capture = (name: string) => reduce(fixture(`${dir}/${name}.jsonl`)).facts;

  it.each([
    'denied-default',
    'denied-dontAsk',
    'denied-noflag',
    ...(dir === 'claude-2.1.332' ? ['denied-manual'] : []),
  ])('%s: the run "succeeds" but the denied Bash call is a fact, once', (name) => {
    const facts = capture(name);
    expect(facts.terminal).toEqual({ kind: 'completed' });
    expect(facts.finalMessage).toBe('Could not create it.');
    expect(facts.denials).toEqual([{ tool: 'Bash', detail: 'touch denied.txt' }]);
  });

  it('tool-acceptEdits: nothing denied', () => {
    expect(capture('tool-acceptEdits').denials).toBeUndefined();
  });

  it('max-turns-1: its own reason, max_turns', () => {
    expect(classifyExit(capture('max-turns-1'), exited(1))).toEqual({
      status: 'failed',
      reason: 'max_turns',
      errorMessage: 'Reached maximum number of turns (1)',
    });
  });

  it('max-budget: budget_exceeded, the reason of every spending cap', () => {
    expect(classifyExit(capture('max-budget'), exited(1))).toMatchObject({
      status: 'failed',
      reason: 'budget_exceeded',
    });
  });

  it('api-500: vendor_error in the API words', () => {
    const classified = classifyExit(capture('api-500'), exited(1));
    expect(classified).toMatchObject({ status: 'failed', reason: 'vendor_error' });
    expect(classified.errorMessage).toMatch(/500/);
  });

  it("resume-2: the cost is this run's, not the whole session's", () => {
    // 2.1.332 reports total_cost_usd 0.00884 for the session of two runs; this run cost 0.00442.
    // 2.1.197 reports per process.
    expect(capture('resume-2').usage?.costUsd).toBe(dir === 'claude-2.1.332' ? 0.00442 : 0.005549999999999999);
  });
});

describe('claude runs with several results', () => {
  /** The captured denied-default run of `dir`, with a second turn appended (a background shell woke it). */
  function twoTurns(dir: string, second: Record<string, unknown>): unknown[] {
    const events = fixture(`${dir}/denied-default.jsonl`)
      .toString('utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const first = events.find((e) => e['type'] === 'result')!;
    return [...events, { ...first, ...second }];
  }

  it.each(VERSIONS)('%s: usage is summed over every result', (dir) => {
    const facts = reduceEvents(
      twoTurns(dir, {
        usage: { input_tokens: 1000, cache_creation_input_tokens: 0, cache_read_input_tokens: 100, output_tokens: 20 },
      }),
    );
    // First result: 2000 + 200 cache read in, 70 out; second: 1000 + 100 in, 20 out.
    expect(facts.usage).toMatchObject({ inputTokens: 3300, cachedInputTokens: 300, outputTokens: 90 });
  });

  it.each(VERSIONS)(
    '%s: a failing last turn fails the run with the API error, not "reported success but exited 1"',
    (dir) => {
      const facts = reduceEvents(
        twoTurns(dir, { is_error: true, result: 'API Error: 500 {"type":"error"}', permission_denials: [] }),
      );
      const classified = classifyExit(facts, exited(1));
      expect(classified).toEqual({
        status: 'failed',
        reason: 'vendor_error',
        errorMessage: 'API Error: 500 {"type":"error"}',
      });
      // The first turn's denial is still reported, once.
      expect(facts.denials).toEqual([{ tool: 'Bash', detail: 'touch denied.txt' }]);
    },
  );

  it('2.1.332: cost is the sum of model_usage_since_last_result', () => {
    const facts = reduceEvents(
      twoTurns('claude-2.1.332', {
        total_cost_usd: 0.02,
        model_usage_since_last_result: { a: { costUSD: 0.001 }, b: { costUSD: 0.002 } },
      }),
    );
    expect(facts.usage?.costUsd).toBeCloseTo(0.00944 + 0.003, 10);
  });

  it('a live permission_denied without a result is still reported, with its command', () => {
    const facts = reduceEvents([
      { type: 'system', subtype: 'init', session_id: 's-1' },
      {
        type: 'assistant',
        parent_tool_use_id: null,
        message: {
          model: 'm',
          content: [{ type: 'tool_use', id: 'toolu_9', name: 'Edit', input: { file_path: '/repo/a.ts' } }],
        },
      },
      {
        type: 'system',
        subtype: 'permission_denied',
        tool_name: 'Edit',
        tool_use_id: 'toolu_9',
        message: 'needs approval',
      },
    ]);
    expect(facts.denials).toEqual([{ tool: 'Edit', detail: '/repo/a.ts' }]);
  });
});

describe('claude retries, for the owner', () => {
  it('names the api_retry events of a captured run (2.1.332), and nothing else', () => {
    const events = fixture('claude-2.1.332/api-retry-then-ok.jsonl')
      .toString('utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as unknown);
    const retries = events.map((event) => claudeVendor.describeRetry?.(event)).filter((text) => text !== undefined);
    expect(retries.length).toBeGreaterThan(0);
    expect(retries.length).toBe(events.filter((e) => (e as { subtype?: unknown }).subtype === 'api_retry').length);
    for (const text of retries) expect(text).toMatch(/^API retry \d+/);
  });
});

describe('claude not logged in (measured on 2.1.332: empty CLAUDE_CONFIG_DIR, no ANTHROPIC_API_KEY)', () => {
  // claude's own lines, trimmed: a synthetic assistant message flagged as an API error, then the result.
  const synthetic = {
    type: 'assistant',
    message: {
      model: '<synthetic>',
      role: 'assistant',
      type: 'message',
      content: [{ type: 'text', text: 'Not logged in · Please run /login' }],
    },
    session_id: 's',
    error: 'authentication_failed',
    is_api_error_message: true,
  };
  const result = {
    type: 'result',
    subtype: 'success',
    is_error: true,
    terminal_reason: 'api_error',
    result: 'Not logged in · Please run /login',
    session_id: 's',
  };

  it('is an auth failure in claude own words', () => {
    expect(claudeVendor.describeAuthFailure?.({ event: synthetic })).toBe('Not logged in · Please run /login');
  });

  it('is not an auth failure when the agent merely says the same words', () => {
    const agent = {
      type: 'assistant',
      message: {
        model: 'claude-x',
        role: 'assistant',
        content: [{ type: 'text', text: 'Not logged in · Please run /login' }],
      },
      session_id: 's',
    };
    expect(claudeVendor.describeAuthFailure?.({ event: agent })).toBeUndefined();
    expect(
      claudeVendor.describeAuthFailure?.({ event: { ...result, is_error: false, terminal_reason: 'completed' } }),
    ).toBeUndefined();
    expect(claudeVendor.describeAuthFailure?.({ stderr: 'Not logged in · Please run /login\n' })).toBeUndefined();
  });

  it('says how to log claude in for the config dir runs use', () => {
    const fix = claudeVendor.loginFix?.('/srv/claude');
    expect(fix).toContain('CLAUDE_CONFIG_DIR=/srv/claude claude');
    expect(fix).toContain('[harness] claude_config_dir');
  });
});
