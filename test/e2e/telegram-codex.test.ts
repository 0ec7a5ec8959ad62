/**
 * The walking skeleton end to end: the real grammY client in `baton start` talks to a fake Bot
 * API server, and baton runs the real codex CLI against a fake Responses API server. All on
 * 127.0.0.1.
 */
import { execa } from 'execa';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { Update } from 'grammy/types';
import { GUEST_REFUSAL } from '../../src/dispatch/trust.js';
import { inputItemsOf, type FakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeTelegram, SendMessageBody } from '../fakes/fake-telegram.js';
import { CLI } from '../support/cli.js';
import type { ServiceProcess } from '../support/service.js';
import {
  CANARY,
  GUEST,
  OWNER,
  STRANGER,
  TOKEN,
  WAIT_MS,
  replyTarget,
  startTelegramE2E,
  type TelegramE2E,
} from '../support/telegram-e2e.js';
import { waitFor } from '../support/wait.js';

const GROUP = -100500;

let world: TelegramE2E;
let telegram: FakeTelegram;
let model: FakeOpenAI;
let service: ServiceProcess;
let repo: string;
let batonHome: string;

const textOf = (body: SendMessageBody): string => body.text;
const sentTo = (chatId: number): SendMessageBody[] => telegram.sent.filter((m) => Number(m.chat_id) === chatId);
const privateMessage = (userId: number, text: string, messageId: number, replyTo?: SendMessageBody): Update =>
  world.privateMessage(userId, text, messageId, replyTo);

beforeAll(async () => {
  world = await startTelegramE2E({ binDirs: [inject('codexBinDir'), inject('claudeBinDir')] });
  ({ telegram, service, repo, batonHome } = world);
  model = world.openai;
});

afterAll(async () => {
  await world?.dispose();
});

describe('Telegram → codex → outcome', () => {
  it('announces what started and what did not', async () => {
    expect(service.stdout()).toMatch(/telegram: connected/);
    expect(service.stdout()).toContain(`codex codex-cli ${inject('codexVersion')} at `);
    expect(service.stdout()).toContain(`claude ${inject('claudeVersion')} (Claude Code) at `);
    // Logs also go to a rotated file under $BATON_HOME/logs, never with the token. The file opens
    // once baton is ready, with the lines logged before it.
    const log = await vi.waitFor(
      async () => {
        const text = await readFile(join(batonHome, 'logs', 'current.log'), 'utf8');
        expect(text).toContain('"msg":"telegram connected"');
        return text;
      },
      { timeout: 30_000, interval: 50 },
    );
    expect(log).not.toContain(TOKEN);
  });

  it('serves the doctor live: GET /health/ready, baton doctor beside the service, /doctor in chat', async () => {
    const url = /health: (http:\/\/127\.0\.0\.1:\d+\/health\/ready)/.exec(service.stdout())?.[1];
    expect(url).toBeDefined();
    const response = await fetch(url!);
    const body = (await response.json()) as {
      schema: string;
      rows: { area: string; status: string; summary: string }[];
    };
    expect(body.schema).toBe('baton.doctor/1');
    expect(body.rows.find((r) => r.area === 'channel:telegram')).toMatchObject({ status: 'ok' });
    expect(body.rows.find((r) => r.area === 'vendor:codex')?.summary).toContain(inject('codexVersion'));
    expect(JSON.stringify(body)).not.toContain(TOKEN);

    const doctor = await execa(process.execPath, [CLI, 'doctor', '--json'], {
      env: world.env,
      extendEnv: false,
      reject: false,
    });
    expect(doctor.exitCode).toBe(response.status === 200 ? 0 : 1);
    expect(
      (JSON.parse(String(doctor.stdout)) as { rows: { area: string; summary: string }[] }).rows.find(
        (r) => r.area === 'channel:telegram',
      )?.summary,
    ).toMatch(/connected/);

    telegram.pushUpdate(privateMessage(OWNER, '/doctor', 5));
    const table = await telegram.waitForSent((m) => replyTarget(m) === 5, WAIT_MS);
    expect(table.text).toMatch(/^AREA\s+STATUS\s+SUMMARY/);
    telegram.pushUpdate(privateMessage(GUEST, '/doctor', 6));
    expect((await telegram.waitForSent((m) => replyTarget(m) === 6, WAIT_MS)).text).toBe(GUEST_REFUSAL);
  });

  it('runs /codex from the owner: started, the tool call creates the file, completed with the final text', async () => {
    model.enqueue(
      {
        kind: 'tool_call',
        name: 'exec_command',
        arguments: { cmd: 'printf hello > hello.txt && env > child-env.txt' },
      },
      { kind: 'message', text: 'Created hello.txt for you.' },
    );
    const pushedAt = performance.now();
    const messageId = 10;
    telegram.pushUpdate(privateMessage(OWNER, '/codex create hello.txt', messageId));

    const started = await telegram.waitForSent(
      (m) => /^\[run hr_[0-9a-f]{12}\] started · codex · /.test(m.text),
      WAIT_MS,
    );
    const startedMs = performance.now() - pushedAt;
    const runId = /\[run (hr_[0-9a-f]{12})\]/.exec(started.text)![1]!;
    expect(started.text).toBe(`[run ${runId}] started · codex · ${repo}`);
    expect(replyTarget(started)).toBe(messageId);
    expect(started.parse_mode).toBeUndefined();

    const completed = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] completed`), WAIT_MS);
    const completedMs = performance.now() - pushedAt;
    expect(completed.text).toMatch(
      new RegExp(`^\\[run ${runId}\\] completed · codex · ${repo} · \\S+ · [\\d,]+ tokens`),
    );
    expect(completed.text).toContain('Created hello.txt for you.');
    expect(replyTarget(completed)).toBe(messageId);
    expect(await readFile(join(repo, 'hello.txt'), 'utf8')).toBe('hello');

    // The model saw the tool's output on its second request.
    expect(
      model.requests
        .filter((r) => r.path === '/v1/responses')
        .flatMap(inputItemsOf)
        .some((i) => i.type === 'function_call_output'),
    ).toBe(true);

    // The child's environment was rebuilt from nothing: no service secret reached it.
    const childEnv = await readFile(join(repo, 'child-env.txt'), 'utf8');
    expect(childEnv).toContain(`BATON_RUN_ID=${runId}`);
    expect(childEnv).not.toContain(CANARY);
    expect(childEnv).not.toContain(TOKEN);
    expect(childEnv).not.toMatch(/^TELEGRAM_/m);

    console.info(
      `e2e: update → started reply ${startedMs.toFixed(0)} ms; update → completed ${completedMs.toFixed(0)} ms`,
    );

    // /runs shows the stored run as completed.
    telegram.pushUpdate(privateMessage(OWNER, `/runs ${runId}`, 11));
    const details = await telegram.waitForSent((m) => replyTarget(m) === 11, WAIT_MS);
    expect(details.text).toMatch(new RegExp(`^\\[run ${runId}\\] completed`));
    expect(details.text).toContain('Created hello.txt for you.');
  });

  it('resumes the codex session when the owner replies to a run message', async () => {
    model.enqueue({ kind: 'message', text: 'First answer.' });
    telegram.pushUpdate(privateMessage(OWNER, '/codex remember the word pelican', 60));
    const first = await telegram.waitForSent((m) => replyTarget(m) === 60 && / completed · /.test(m.text), WAIT_MS);
    const parentId = /\[run (hr_[0-9a-f]{12})\]/.exec(first.text)![1]!;

    model.enqueue({ kind: 'message', text: 'The word was pelican.' });
    const before = model.requests.length;
    telegram.pushUpdate(privateMessage(OWNER, 'which word?', 61, first));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 61 && m.text.includes('] started'), WAIT_MS);
    expect(started.text).toMatch(new RegExp(`started · codex · ${repo} · resuming ${parentId}$`));
    const childId = /\[run (hr_[0-9a-f]{12})\]/.exec(started.text)![1]!;
    const done = await telegram.waitForSent((m) => m.text.startsWith(`[run ${childId}] completed`), WAIT_MS);
    expect(done.text).toContain('The word was pelican.');

    // Same vendor session, and the model was sent the earlier conversation.
    const threadOf = async (runId: string): Promise<string | undefined> =>
      (await readFile(join(batonHome, 'harness', 'runs', runId, 'events.jsonl'), 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { type: string; thread_id?: string })
        .find((e) => e.type === 'thread.started')?.thread_id;
    expect(await threadOf(childId)).toBe(await threadOf(parentId));
    const resumedRequest = model.requests.slice(before).find((r) => r.path === '/v1/responses')!;
    expect(JSON.stringify(inputItemsOf(resumedRequest))).toContain('remember the word pelican');
    expect(JSON.stringify(inputItemsOf(resumedRequest))).toContain('which word?');
  });

  it('refuses a guest launch with the contract text and starts nothing', async () => {
    const requestsBefore = model.requests.length;
    telegram.pushUpdate(privateMessage(GUEST, '/codex delete everything', 20));
    const refusal = await telegram.waitForSent((m) => Number(m.chat_id) === GUEST && replyTarget(m) === 20, WAIT_MS);
    expect(refusal.text).toBe(GUEST_REFUSAL);
    // A guest may still read.
    telegram.pushUpdate(privateMessage(GUEST, '/whoami', 21));
    const whoami = await telegram.waitForSent((m) => replyTarget(m) === 21, WAIT_MS);
    expect(whoami.text).toContain(`user id: ${GUEST}`);
    expect(model.requests.length).toBe(requestsBefore);
    expect(sentTo(GUEST).some((m) => /\[run hr_/.test(m.text))).toBe(false);
  });

  it('ignores a stranger, except /whoami in a private chat', async () => {
    const group = (text: string, messageId: number): Update => {
      const update = privateMessage(STRANGER, text, messageId);
      return {
        ...update,
        message: { ...update.message!, chat: { id: GROUP, type: 'group', title: 'team' } },
      } as Update;
    };
    telegram.pushUpdate(privateMessage(STRANGER, '/codex do something', 30));
    telegram.pushUpdate(group('/whoami', 31));
    telegram.pushUpdate(group('/codex do something', 32));
    telegram.pushUpdate(privateMessage(STRANGER, '/whoami', 33));
    const whoami = await telegram.waitForSent((m) => replyTarget(m) === 33, WAIT_MS);
    expect(whoami.text).toContain(`user id: ${STRANGER}`);
    expect(whoami.text).toContain('Role: stranger');
    // The owner's next answer marks a point after which the stranger's updates were all handled.
    telegram.pushUpdate(privateMessage(OWNER, '/help', 34));
    await telegram.waitForSent((m) => replyTarget(m) === 34, WAIT_MS);
    expect(sentTo(STRANGER).map(textOf)).toEqual([whoami.text]);
    expect(sentTo(GROUP)).toEqual([]);
  });

  it('reports a model HTTP 500 as a failed outcome with the vendor words and a resume command', async () => {
    model.enqueue({ kind: 'http_error', status: 500 });
    telegram.pushUpdate(privateMessage(OWNER, '/codex this will fail', 40));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 40 && m.text.includes('] started'), WAIT_MS);
    const runId = /\[run (hr_[0-9a-f]{12})\]/.exec(started.text)![1]!;
    const failed = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] failed`), WAIT_MS);
    // The vendor's own words come first: the error of codex app-server's failed turn/completed.
    const events = (await readFile(join(batonHome, 'harness', 'runs', runId, 'events.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as { method?: string; params?: { turn?: { status: string; error?: { message: string } } } },
      );
    const vendorWords = events.find((e) => e.method === 'turn/completed' && e.params?.turn?.status === 'failed')?.params
      ?.turn?.error?.message;
    expect(vendorWords).toBeTruthy();
    expect(failed.text.split('\n')[1]).toBe(vendorWords);
    expect(failed.text).toContain('Reason: vendor_error');
    expect(failed.text).toMatch(/Resume: cd \S+ && codex exec resume [0-9a-f-]+ --json/);
    expect(failed.text).toContain('git status');
  });

  it('launches one run for an update delivered twice', async () => {
    model.enqueue({ kind: 'message', text: 'Only once.' });
    const update = privateMessage(OWNER, '/codex say it once', 50);
    telegram.pushUpdate(update);
    const started = await telegram.waitForSent((m) => replyTarget(m) === 50 && m.text.includes('] started'), WAIT_MS);
    const runId = /\[run (hr_[0-9a-f]{12})\]/.exec(started.text)![1]!;
    await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] completed`), WAIT_MS);
    const responsesBefore = model.requests.filter((r) => r.path === '/v1/responses').length;

    telegram.pushUpdate(update); // Telegram redelivers the same update_id
    telegram.pushUpdate(privateMessage(OWNER, '/help', 51));
    await telegram.waitForSent((m) => replyTarget(m) === 51, WAIT_MS);
    await waitFor(() => telegram.pendingUpdates() === 0, { what: 'the updates to be fetched' });

    expect(telegram.sent.filter((m) => replyTarget(m) === 50).map((m) => m.text.split(' · ')[0])).toEqual([
      `[run ${runId}] started`,
      `[run ${runId}] completed`,
    ]);
    expect(model.requests.filter((r) => r.path === '/v1/responses').length).toBe(responsesBefore);
    expect(existsSync(join(repo, 'hello.txt'))).toBe(true);
  });
});
