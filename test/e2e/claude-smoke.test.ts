/**
 * The real, pinned claude CLI driven exactly as baton drives it — argv from
 * `claudeVendor.buildArgv`, env from `claudeVendor.vendorEnv` plus HOME/PATH/USER/TERM, stdin
 * ignored, stdout through `JsonLineDecoder` and the claude reducer, the outcome from
 * `classifyExit` — against the fake Anthropic server on 127.0.0.1. If one of these breaks after a
 * CLI bump, the vendor module, the fake or VENDOR-CLI.md needs updating, not the assertion.
 */
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { JsonLineDecoder } from '../../src/harness/json-lines.js';
import { classifyExit, type Classified } from '../../src/harness/outcome.js';
import { claudeVendor } from '../../src/harness/vendors/claude.js';
import type { LaunchRequest, StreamFacts } from '../../src/harness/vendors/types.js';
import {
  isMessagesCall,
  messagesOf,
  sessionIdOf,
  startFakeAnthropic,
  textsOf,
  type AnthropicMessageParam,
  type FakeAnthropic,
} from '../fakes/fake-anthropic.js';
import { FAKE_ANTHROPIC_API_KEY, makeClaudeConfigDir } from '../support/claude-home.js';
import { ensureClaudeCli, type InstalledCli } from '../support/vendor-clis.js';

/** What one run of the CLI left behind. */
interface ClaudeRun {
  exitCode: number | undefined;
  stderr: string;
  facts: StreamFacts;
  outcome: Classified;
  framingErrors: number;
}

/** Longest a single CLI run may take before execa kills it (a safety net, not an assertion), in ms. */
const RUN_LIMIT_MS = 25_000;

describe('claude -p against the fake Anthropic server', () => {
  let cli: InstalledCli;
  let model: FakeAnthropic;
  let scratch: string;
  let repo: string;
  let configDir: string;

  beforeAll(async () => {
    cli = await ensureClaudeCli();
  });

  beforeEach(async () => {
    model = await startFakeAnthropic();
    scratch = await mkdtemp(join(tmpdir(), 'baton-claude-smoke-'));
    repo = join(scratch, 'repo');
    await mkdir(join(scratch, 'home'), { recursive: true });
    await execa('git', ['init', '--quiet', repo]);
    configDir = await makeClaudeConfigDir(join(scratch, 'claude-config'), model.url);
  });

  afterEach(async () => {
    await model.close();
    await rm(scratch, { recursive: true, force: true });
  });

  /** Runs claude the way the supervisor does and folds its stdout as the chunks arrive. */
  async function runClaude(request: LaunchRequest): Promise<ClaudeRun> {
    const decoder = new JsonLineDecoder(4 * 1024 * 1024);
    const reducer = claudeVendor.newReducer();
    let framingErrors = 0;
    const take = (lines: ReturnType<JsonLineDecoder['push']>): void => {
      for (const line of lines) {
        if (line.kind === 'event') reducer.push(line.value);
        else framingErrors += 1;
      }
    };
    const child = execa(claudeVendor.binaryName, claudeVendor.buildArgv(request, { cwd: repo }), {
      cwd: repo,
      env: {
        HOME: join(scratch, 'home'),
        PATH: `${cli.binDir}:${process.env['PATH'] ?? '/usr/bin:/bin'}`,
        USER: userInfo().username,
        TERM: 'dumb',
        ...claudeVendor.vendorEnv({ codexHome: join(scratch, 'unused-codex-home'), claudeConfigDir: configDir }),
      },
      extendEnv: false,
      stdin: 'pipe',
      encoding: 'buffer',
      reject: false,
      timeout: RUN_LIMIT_MS,
    });
    child.stdout.on('data', (chunk: Buffer) => take(decoder.push(chunk)));
    // The task goes on stdin, as the supervisor sends it.
    child.stdin.end(await claudeVendor.stdinPayload(request));
    const result = await child;
    take(decoder.end());
    const facts = reducer.facts();
    const exit = { exitCode: result.exitCode ?? null, signal: result.signal ?? null, timedOut: result.timedOut };
    return {
      exitCode: result.exitCode,
      stderr: Buffer.from(result.stderr).toString('utf8'),
      facts,
      outcome: classifyExit(facts, exit),
      framingErrors,
    };
  }

  const modelCalls = () => model.requests.filter(isMessagesCall);
  const texts = (messages: AnthropicMessageParam[], role: AnthropicMessageParam['role']) =>
    messages.filter((m) => m.role === role).flatMap(textsOf);

  it('runs a Bash tool call under acceptEdits, writes the file and completes with the final text', async () => {
    model.enqueue(
      { kind: 'tool_use', name: 'Bash', input: { command: 'echo hi > hello.txt', description: 'Create hello.txt' } },
      {
        kind: 'message',
        text: 'Created hello.txt',
        usage: { input_tokens: 300, output_tokens: 12, cache_read_input_tokens: 40 },
      },
    );

    const run = await runClaude({ prompt: 'create hello.txt', posture: 'acceptEdits' });

    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.outcome).toEqual({ status: 'completed', reason: null, errorMessage: null });
    expect(run.framingErrors).toBe(0);
    expect(run.facts).toMatchObject({
      finalMessage: 'Created hello.txt',
      terminal: { kind: 'completed' },
      notices: [],
      // Summed by claude over both turns: (100 + 0) + (300 + 40) input, 10 + 12 output.
      usage: { inputTokens: 440, cachedInputTokens: 40, outputTokens: 22 },
    });
    expect(run.facts.usage?.costUsd).toBeGreaterThan(0);
    expect(run.facts.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    await expect(readFile(join(repo, 'hello.txt'), 'utf8')).resolves.toBe('hi\n');

    const calls = modelCalls();
    expect(calls).toHaveLength(2);
    expect(model.pendingTurns()).toBe(0);
    expect(calls[0]).toMatchObject({
      query: 'beta=true',
      body: { stream: true },
      headers: { 'x-api-key': FAKE_ANTHROPIC_API_KEY },
    });
    expect(calls.map(sessionIdOf)).toEqual([run.facts.sessionId, run.facts.sessionId]);
    const toolResults = messagesOf(calls[1]!).flatMap((m) => (typeof m.content === 'string' ? [] : m.content));
    // The id the fake gave the tool call (its number depends on the requests before it: 2.1.197
    // warms up with HEAD /, 2.1.332 does not) comes back on the tool result.
    const toolUse = toolResults.find((b) => b.type === 'tool_use') as { id?: string } | undefined;
    expect(toolUse?.id).toMatch(/^toolu_fake_\d+$/);
    expect(toolResults).toContainEqual(expect.objectContaining({ type: 'tool_result', tool_use_id: toolUse?.id }));
  });

  it.each([undefined, 'default', 'manual'])(
    'reports a Bash write the default permission mode (asked as %s) denied, and still completes',
    async (posture) => {
      model.enqueue(
        { kind: 'tool_use', name: 'Bash', input: { command: 'touch denied.txt' } },
        { kind: 'message', text: 'Could not create it.' },
      );

      const run = await runClaude({ prompt: 'create denied.txt', ...(posture ? { posture } : {}) });

      expect(run.exitCode, run.stderr).toBe(0);
      expect(run.outcome.status).toBe('completed');
      expect(run.facts.denials).toEqual([{ tool: 'Bash', detail: 'touch denied.txt' }]);
      await expect(readFile(join(repo, 'denied.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    },
  );

  it.each([
    { status: 401, words: 'Failed to authenticate. API Error: 401 fake authentication_error' },
    { status: 500, words: 'API Error: 500 fake api_error.' },
  ])('fails with the vendor words when the model answers HTTP $status', async ({ status, words }) => {
    model.enqueue({ kind: 'http_error', status });

    const run = await runClaude({ prompt: 'anything' });

    expect(run.exitCode).toBe(1);
    expect(run.outcome).toMatchObject({ status: 'failed', reason: 'vendor_error' });
    expect(run.outcome.errorMessage?.startsWith(words)).toBe(true);
    expect(run.facts.terminal).toEqual({ kind: 'failed', message: run.outcome.errorMessage });
    expect(run.facts.finalMessage).toBeUndefined();
    // CLAUDE_CODE_MAX_RETRIES=0 in the config dir: exactly one attempt.
    expect(modelCalls()).toHaveLength(1);
  });

  it('resumes a session: same id, and the model receives the earlier conversation', async () => {
    model.enqueue({ kind: 'message', text: 'The word is pelican.' }, { kind: 'message', text: 'You said pelican.' });

    const first = await runClaude({ prompt: 'Remember the word pelican.' });
    expect(first.outcome.status).toBe('completed');
    const sessionId = first.facts.sessionId;
    if (sessionId === undefined) throw new Error('the first run reported no session id');

    const second = await runClaude({ prompt: 'Which word did I say?', resumeSessionId: sessionId });

    expect(second.exitCode, second.stderr).toBe(0);
    expect(second.outcome.status).toBe('completed');
    expect(second.facts).toMatchObject({ sessionId, finalMessage: 'You said pelican.' });
    const resumed = modelCalls()[1];
    if (!resumed) throw new Error('the resumed run made no model call');
    expect(sessionIdOf(resumed)).toBe(sessionId);
    const messages = messagesOf(resumed);
    expect(texts(messages, 'user')).toEqual(
      expect.arrayContaining(['Remember the word pelican.', 'Which word did I say?']),
    );
    expect(texts(messages, 'assistant')).toEqual(['The word is pelican.']);
    expect(texts(messages, 'user').at(-1)).toBe('Which word did I say?');
  });

  it('fails a resume of an unknown session with the vendor words and makes no model call', async () => {
    const run = await runClaude({ prompt: 'go on', resumeSessionId: '00000000-0000-4000-8000-000000000000' });

    expect(run.exitCode).toBe(1);
    expect(run.outcome).toEqual({
      status: 'failed',
      reason: 'vendor_error',
      errorMessage: 'No conversation found with session ID: 00000000-0000-4000-8000-000000000000',
    });
    expect(modelCalls()).toHaveLength(0);
  });

  it('hands a prompt that looks like flags to the model verbatim, with the model flag applied', async () => {
    const prompt = '--help -x\n-- second line';

    const run = await runClaude({ prompt, model: 'claude-fake-model' });

    expect(run.outcome.status).toBe('completed');
    const call = modelCalls()[0];
    expect(call?.body).toMatchObject({ model: 'claude-fake-model' });
    // The prompt is the last text of the user's message; claude may add `system` entries after it.
    expect(texts(messagesOf(call!), 'user').at(-1)).toBe(prompt);
  });
});

describe('fake Anthropic server', () => {
  let model: FakeAnthropic;
  beforeEach(async () => {
    model = await startFakeAnthropic();
  });
  afterEach(async () => {
    await model.close();
  });

  const post = (body: unknown) =>
    fetch(`${model.url}/v1/messages?beta=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('answers a non-streaming call with a Messages API JSON message from the script', async () => {
    model.enqueue({ kind: 'tool_use', name: 'Bash', input: { command: 'ls' }, text: 'Looking.' });

    const res = await post({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });

    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'm',
      stop_reason: 'tool_use',
      content: [
        { type: 'text', text: 'Looking.' },
        { type: 'tool_use', name: 'Bash', input: { command: 'ls' } },
      ],
      usage: { input_tokens: 100, output_tokens: 10 },
    });
    expect(messagesOf(model.requests[0]!)).toEqual([{ role: 'user', content: 'hi' }]);
  });

  it('streams SSE frames in the Messages API order and falls back to "ok"', async () => {
    const res = await post({ model: 'm', stream: true, messages: [] });
    const frames = (await res.text()).split('\n\n').filter((f) => f !== '');
    const types = frames.map((f) => /^event: (.+)$/m.exec(f)?.[1]);

    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(types).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(frames[2]).toContain('"delta":{"type":"text_delta","text":"ok"}');
    expect(frames[4]).toContain('"stop_reason":"end_turn"');
  });

  it('answers HEAD / with 200, unknown paths with a 404 error, and records both', async () => {
    expect((await fetch(`${model.url}/`, { method: 'HEAD' })).status).toBe(200);
    const res = await fetch(`${model.url}/v1/models`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    expect(model.requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      'HEAD / 200',
      'GET /v1/models 404',
    ]);
    await expect(model.waitForRequest((r) => r.path === '/v1/models', 1_000)).resolves.toMatchObject({ status: 404 });
  });

  it('sends a scripted HTTP error with its Anthropic error type, or the given body', async () => {
    model.enqueue({ kind: 'http_error', status: 529 }, { kind: 'http_error', status: 400, body: 'plain words' });

    const overloaded = await post({ stream: true, messages: [] });
    expect(overloaded.status).toBe(529);
    expect(await overloaded.json()).toMatchObject({
      type: 'error',
      error: { type: 'overloaded_error', message: 'fake overloaded_error' },
    });
    const raw = await post({ stream: true, messages: [] });
    expect([raw.status, await raw.text()]).toEqual([400, 'plain words']);
    expect(model.pendingTurns()).toBe(0);
  });
});
