/**
 * Claude Code through baton end to end: `/claude` from the owner on the fake Bot API, the real
 * claude CLI (the pinned version) against the fake Anthropic Messages API, all on 127.0.0.1.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { isMessagesCall, messagesOf, textsOf } from '../fakes/fake-anthropic.js';
import { OWNER, WAIT_MS, replyTarget, runIdOf, startTelegramE2E, type TelegramE2E } from '../support/telegram-e2e.js';

let world: TelegramE2E;

beforeAll(async () => {
  world = await startTelegramE2E({ binDirs: [inject('codexBinDir'), inject('claudeBinDir')] });
});
afterAll(async () => world?.dispose());

describe('Telegram → claude → outcome', () => {
  it('runs a tool-using claude task to completion with the final text and usage', async () => {
    const { telegram, anthropic, repo } = world;
    anthropic.enqueue(
      {
        kind: 'tool_use',
        name: 'Bash',
        input: { command: 'printf claude > from-claude.txt', description: 'write a file' },
      },
      { kind: 'message', text: 'Wrote from-claude.txt.' },
    );
    telegram.pushUpdate(world.privateMessage(OWNER, '/claude mode:acceptEdits write the file', 10));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 10 && m.text.includes('] started'), WAIT_MS);
    expect(started.text).toBe(`[run ${runIdOf(started.text)}] started · claude · ${repo}`);
    const runId = runIdOf(started.text);
    const done = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] completed`), WAIT_MS);
    expect(done.text).toMatch(new RegExp(`^\\[run ${runId}\\] completed · claude · ${repo} · \\S+ · [\\d,]+ tokens`));
    expect(done.text).toContain('Wrote from-claude.txt.');
    expect(await readFile(join(repo, 'from-claude.txt'), 'utf8')).toBe('claude');
  });

  it('resumes the claude session on a reply, sending the earlier conversation', async () => {
    const { telegram, anthropic } = world;
    anthropic.enqueue({ kind: 'message', text: 'Noted: the colour is teal.' });
    telegram.pushUpdate(world.privateMessage(OWNER, '/claude remember the colour teal', 20));
    const first = await telegram.waitForSent((m) => replyTarget(m) === 20 && / completed · /.test(m.text), WAIT_MS);
    const parentId = runIdOf(first.text);

    anthropic.enqueue({ kind: 'message', text: 'It was teal.' });
    const before = anthropic.requests.length;
    telegram.pushUpdate(world.privateMessage(OWNER, 'which colour?', 21, first));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 21 && m.text.includes('] started'), WAIT_MS);
    expect(started.text).toMatch(new RegExp(`started · claude · .* · resuming ${parentId}$`));
    const childId = runIdOf(started.text);
    const done = await telegram.waitForSent((m) => m.text.startsWith(`[run ${childId}] completed`), WAIT_MS);
    expect(done.text).toContain('It was teal.');

    const sessionOf = async (runId: string): Promise<unknown> =>
      (await world.eventsOf(runId)).find((e) => e.type === 'system' && e.subtype === 'init')?.session_id;
    expect(await sessionOf(childId)).toBe(await sessionOf(parentId));
    const resumed = anthropic.requests.slice(before).filter(isMessagesCall).at(-1)!;
    const texts = messagesOf(resumed).flatMap(textsOf).join('\n');
    expect(texts).toContain('remember the colour teal');
    expect(texts).toContain('which colour?');
  });

  it('reports an API error as failed with the vendor words and a resume command', async () => {
    const { telegram, anthropic } = world;
    // 404 (no such model), not a login problem (a 401 is: next test). Measured on claude 2.1.332:
    // a failed streaming request is tried once more without streaming, so both get the 404.
    anthropic.enqueue({ kind: 'http_error', status: 404 }, { kind: 'http_error', status: 404 });
    telegram.pushUpdate(world.privateMessage(OWNER, '/claude this will fail', 30));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 30 && m.text.includes('] started'), WAIT_MS);
    const runId = runIdOf(started.text);
    const failed = await telegram
      .waitForSent((m) => m.text.startsWith(`[run ${runId}] `) && !m.text.includes('] started'), WAIT_MS)
      .catch((err: unknown) => {
        throw new Error(
          `${String(err)}\nrequests: ${JSON.stringify(anthropic.requests.slice(-4).map((r) => ({ path: r.path, status: r.status })))}`,
        );
      });
    const result = (await world.eventsOf(runId)).find((e) => e.type === 'result');
    expect(result?.is_error).toBe(true);
    expect(failed.text.split('\n')[1]).toBe(String(result?.result).trim());
    expect(failed.text).toContain('Reason: vendor_error');
    expect(failed.text).toMatch(/Resume: cd \S+ && claude --resume [0-9a-f-]+/);
  });

  it('reports refused credentials (API 401) as not_logged_in with the fix, and offers no resume', async () => {
    const { telegram, anthropic } = world;
    anthropic.enqueue({ kind: 'http_error', status: 401 });
    telegram.pushUpdate(world.privateMessage(OWNER, '/claude this will be refused', 31));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 31 && m.text.includes('] started'), WAIT_MS);
    const runId = runIdOf(started.text);
    const failed = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] failed`), WAIT_MS);
    expect(failed.text).toContain('Failed to authenticate. API Error: 401');
    expect(failed.text).toContain('claude_config_dir');
    expect(failed.text).toContain('Reason: not_logged_in');
    expect(failed.text).not.toContain('Resume:');
  });

  it('never reports a run whose write claude denied as plainly completed (chat and /runs)', async () => {
    const { telegram, anthropic, repo } = world;
    // The model "does" the work through Bash, the default permission mode denies it, and the
    // model then claims success; claude's result says success with permission_denials.
    anthropic.enqueue(
      { kind: 'tool_use', name: 'Bash', input: { command: 'touch denied.txt' } },
      { kind: 'message', text: 'Created denied.txt.' },
    );
    telegram.pushUpdate(world.privateMessage(OWNER, '/claude create denied.txt', 50));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 50 && m.text.includes('] started'), WAIT_MS);
    const runId = runIdOf(started.text);
    const done = await telegram.waitForSent(
      (m) => m.text.startsWith(`[run ${runId}] `) && !m.text.includes('] started'),
      WAIT_MS,
    );
    const lines = done.text.split('\n');
    expect(lines[0]).toMatch(new RegExp(`^\\[run ${runId}\\] completed · claude · .* · 1 tool call denied$`));
    expect(lines[2]).toBe('- Bash: touch denied.txt');
    expect(done.text).toContain('mode:acceptEdits');
    await expect(readFile(join(repo, 'denied.txt'))).rejects.toMatchObject({ code: 'ENOENT' });

    telegram.pushUpdate(world.privateMessage(OWNER, `/runs ${runId}`, 51));
    const view = await telegram.waitForSent((m) => replyTarget(m) === 51, WAIT_MS);
    expect(view.text.split('\n')[0]).toBe(`[run ${runId}] completed · 1 tool call denied`);
    expect(view.text).toContain('- Bash: touch denied.txt');
  });

  it('refuses bypassPermissions from chat', async () => {
    const { telegram } = world;
    telegram.pushUpdate(world.privateMessage(OWNER, '/claude mode:bypassPermissions do it', 40));
    const refusal = await telegram.waitForSent((m) => replyTarget(m) === 40, WAIT_MS);
    expect(refusal.text).toMatch(/^bypassPermissions is refused/);
  });
});
