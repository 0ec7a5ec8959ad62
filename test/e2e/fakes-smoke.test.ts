/**
 * Proves the fakes and the pinned codex CLI behave like the real things baton relies on:
 * the real `codex exec --json` against the fake model server, and the real grammY client
 * against the fake Telegram server. Facts checked here are from shared/spec/VENDOR-CLI.md and
 * the Bot API docs; if one breaks, the fakes (or the spec) need updating, not the assertion.
 */
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { Bot, GrammyError } from 'grammy';
import type { Update } from 'grammy/types';
import { afterEach, beforeEach, describe, expect, inject, it, vi } from 'vitest';
import { inputItemsOf, startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/fake-telegram.js';
import { makeCodexHome } from '../support/codex-home.js';

/** Rejects with `what` in the message unless `promise` settles within `timeoutMs`. */
async function within<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`waited ${timeoutMs} ms for ${what}`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

interface CodexEvent {
  type: string;
  item?: { type: string; text?: string };
  error?: { message: string };
  [key: string]: unknown;
}

describe('codex exec --json against the fake model', () => {
  const codexBinDir = inject('codexBinDir');
  let model: FakeOpenAI;
  let scratch: string;

  beforeEach(async () => {
    model = await startFakeOpenAI();
    scratch = await mkdtemp(join(tmpdir(), 'baton-smoke-'));
  });
  afterEach(async () => {
    await model.close();
    await rm(scratch, { recursive: true, force: true });
  });

  /** Runs codex the way a vendor module would: argv prompt, stdin /dev/null, minimal env. */
  async function runCodex(
    prompt: string,
  ): Promise<{ exitCode: number | undefined; events: CodexEvent[]; repo: string; stderr: string }> {
    const repo = join(scratch, 'repo');
    const home = join(scratch, 'home');
    await mkdir(repo, { recursive: true });
    await mkdir(home, { recursive: true });
    await execa('git', ['init', '--quiet', repo]);
    const codexHome = await makeCodexHome(join(scratch, 'codex-home'), model.url);
    const result = await execa('codex', ['exec', '--json', '--skip-git-repo-check', prompt], {
      cwd: repo,
      env: {
        HOME: home,
        PATH: `${codexBinDir}:${process.env['PATH'] ?? '/usr/bin:/bin'}`,
        USER: userInfo().username,
        TERM: 'dumb',
        CODEX_HOME: codexHome,
      },
      extendEnv: false,
      stdin: { file: '/dev/null' },
      reject: false,
      timeout: 60_000,
    });
    const events = result.stdout
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as CodexEvent);
    return { exitCode: result.exitCode, events, repo, stderr: result.stderr };
  }

  it('globalSetup hands the pinned CLI to tests through inject and the environment', () => {
    expect(inject('codexVersion')).toBe('0.171.0');
    expect(process.env['BATON_TEST_CODEX_BIN_DIR']).toBe(codexBinDir);
  });

  it('runs a tool call, then answers, and exits 0 with turn.completed', async () => {
    model.enqueue(
      { kind: 'tool_call', name: 'exec_command', arguments: { cmd: 'echo hi > hello.txt' } },
      { kind: 'message', text: 'Created hello.txt' },
    );

    const run = await runCodex('create hello.txt');

    expect(run.exitCode, run.stderr).toBe(0);
    const types = run.events.map((e) => e.type);
    expect(types[0]).toBe('thread.started');
    expect(types).toContain('turn.completed');
    expect(types).not.toContain('turn.failed');
    expect(run.events).toContainEqual(
      expect.objectContaining({
        type: 'item.completed',
        item: expect.objectContaining({ type: 'agent_message', text: 'Created hello.txt' }),
      }),
    );
    await expect(stat(join(run.repo, 'hello.txt'))).resolves.toMatchObject({ size: 3 });
    const modelCalls = model.requests.filter((r) => r.path === '/v1/responses');
    expect(modelCalls).toHaveLength(2);
    expect(modelCalls[0]?.body).toMatchObject({ model: 'fake-model', stream: true });
    expect(inputItemsOf(modelCalls[1]!)).toContainEqual(
      expect.objectContaining({ type: 'function_call_output', call_id: 'call_1' }),
    );
    expect(model.pendingTurns()).toBe(0);
  });

  // codex 0.171.0 words a 500 as "high demand" without the status; other statuses are named.
  it.each([
    { status: 500, message: /experiencing high demand/ },
    { status: 503, message: /503 Service Unavailable/ },
  ])('fails the turn with rc 1 when the model answers HTTP $status', async ({ status, message }) => {
    model.enqueue({ kind: 'http_error', status });

    const run = await runCodex('anything');

    expect(run.exitCode).toBe(1);
    const failed = run.events.find((e) => e.type === 'turn.failed');
    expect(failed?.error?.message).toMatch(message);
    expect(run.events.map((e) => e.type)).not.toContain('turn.completed');
    // request_max_retries = 0 in the provider table: exactly one attempt.
    expect(model.requests.filter((r) => r.path === '/v1/responses')).toHaveLength(1);
  });
});

describe('fake OpenAI server', () => {
  it('answers unknown paths with a 404 JSON error and records them', async () => {
    const model = await startFakeOpenAI();
    try {
      const res = await fetch(`${model.url}/v1/models`);
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
      expect(model.requests).toEqual([expect.objectContaining({ method: 'GET', path: '/v1/models', status: 404 })]);
    } finally {
      await model.close();
    }
  });
});

describe('grammY against the fake Telegram server', () => {
  const token = '123456:TEST-token';
  let telegram: FakeTelegram;

  beforeEach(async () => {
    telegram = await startFakeTelegram({ token, botUsername: 'baton_smoke_bot' });
  });
  afterEach(async () => {
    await telegram.close();
  });

  it('delivers a pushed /whoami, records the reply, and hands a redelivered update out again', async () => {
    const bot = new Bot(token, { client: { apiRoot: telegram.url } });
    const seen: Update[] = [];
    let redelivered: () => void = () => undefined;
    const secondDelivery = new Promise<void>((resolve) => (redelivered = resolve));
    bot.use(async (ctx, next) => {
      seen.push(ctx.update);
      if (seen.length === 2) redelivered();
      await next();
    });
    bot.command('whoami', (ctx) =>
      ctx.reply(`you are ${String(ctx.from?.id)}`, { reply_parameters: { message_id: ctx.msg.message_id } }),
    );
    const polling = bot.start({ timeout: 30 });
    try {
      const updateId = telegram.pushMessage({ chatId: 4242, from: { id: 4242, username: 'owner' }, text: '/whoami' });
      const reply = await telegram.waitForSent((body) => body.text === 'you are 4242', 10_000);

      expect(reply).toMatchObject({ chat_id: 4242, reply_parameters: { message_id: 1 } });
      expect(telegram.sentMessages[0]).toMatchObject({
        message_id: 2,
        chat: { id: 4242, type: 'private' },
        reply_to_message: { message_id: 1, text: '/whoami' },
      });
      expect(seen[0]?.message?.entities).toEqual([{ type: 'bot_command', offset: 0, length: 7 }]);

      // Same update_id again, after grammY confirmed it through `offset`.
      const first = seen[0];
      if (!first) throw new Error('no update seen');
      expect(telegram.pushUpdate(structuredClone(first))).toBe(updateId);
      await within(secondDelivery, 10_000, 'the re-pushed update to be handed out again');
      expect(seen.map((u) => u.update_id)).toEqual([updateId, updateId]);
    } finally {
      if (bot.isRunning()) await bot.stop();
    }
    await polling;
    expect(telegram.calls.map((c) => c.method)).toEqual(
      expect.arrayContaining(['getMe', 'deleteWebhook', 'getUpdates']),
    );
  });

  it('answers a wrong token with 401, an unknown method with 404, and injected failures as given', async () => {
    const wrong = new Bot('999:WRONG', { client: { apiRoot: telegram.url } });
    await expect(wrong.api.getMe()).rejects.toMatchObject({ error_code: 401, description: 'Unauthorized' });

    const res = await fetch(`${telegram.url}/bot${token}/noSuchMethod`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(await res.json()).toEqual({ ok: false, error_code: 404, description: 'Not Found: method not found' });

    const bot = new Bot(token, { client: { apiRoot: telegram.url } });
    telegram.failNext('sendMessage', {
      status: 429,
      body: {
        ok: false,
        error_code: 429,
        description: 'Too Many Requests: retry after 7',
        parameters: { retry_after: 7 },
      },
    });
    const error: unknown = await bot.api.sendMessage(1, 'hello').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GrammyError);
    expect(error).toMatchObject({ error_code: 429, parameters: { retry_after: 7 } });
    await expect(bot.api.sendMessage(1, 'hello', { parse_mode: 'HTML' })).resolves.toMatchObject({
      message_id: 1,
      text: 'hello',
    });
    expect(telegram.sent).toEqual([{ chat_id: 1, text: 'hello', sentText: 'hello', parse_mode: 'HTML' }]);
  });

  it('keeps Bot API long-poll semantics: held request, offset confirmation, limit, conflict', async () => {
    const call = async (
      body: Record<string, unknown>,
    ): Promise<{ ok: boolean; result?: Update[]; error_code?: number }> => {
      const res = await fetch(`${telegram.url}/bot${token}/getUpdates`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return (await res.json()) as { ok: boolean; result?: Update[]; error_code?: number };
    };
    const held = call({ timeout: 30 });
    await vi.waitFor(() => expect(telegram.calls).toHaveLength(1));
    const superseding = await call({ timeout: 0 });
    expect(superseding).toEqual({ ok: true, result: [] });
    await expect(held).resolves.toMatchObject({ ok: false, error_code: 409 });

    const waiting = call({ timeout: 30 });
    const a = telegram.pushMessage({ chatId: 1, from: { id: 1 }, text: 'a' });
    expect((await waiting).result?.map((u) => u.update_id)).toEqual([a]);
    const b = telegram.pushMessage({ chatId: 1, from: { id: 1 }, text: 'b' });
    const c = telegram.pushMessage({ chatId: 1, from: { id: 1 }, text: 'c' });
    expect((await call({ offset: a, limit: 1 })).result?.map((u) => u.update_id)).toEqual([a]);
    expect((await call({ offset: a + 1 })).result?.map((u) => u.update_id)).toEqual([b, c]);
    expect((await call({ offset: c + 1 })).result).toEqual([]);
    expect(telegram.pendingUpdates()).toBe(0);
  });
});
