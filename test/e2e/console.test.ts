/**
 * The web console in a real browser (Debian's Chromium through playwright-core) against
 * `baton start` with the fake Bot API, the real codex and claude CLIs and their fake model
 * servers: sign in by the link `baton console` prints, watch a run appear and finish without a
 * reload, read its transcript and diff and download its patch, redeliver a dead letter, answer a
 * tool approval from the page while the chat shows who answered. Screenshots go to
 * test-artifacts/console/.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CLI } from '../support/cli.js';
import { openBrowser, type TestBrowser } from '../support/browser.js';
import { OWNER, WAIT_MS, replyTarget, runIdOf, startTelegramE2E, type TelegramE2E } from '../support/telegram-e2e.js';
import { axeViolations } from '../support/axe.js';

let world: TelegramE2E;
let browser: TestBrowser;
const dialogs: string[] = [];
const cspErrors: string[] = [];

/** `baton console` run as the user would beside the service; resolves with the printed link. */
async function loginLink(): Promise<string> {
  const result = await execa(process.execPath, [CLI, 'console'], { env: world.env, extendEnv: false, reject: false });
  expect(result.exitCode, result.stderr).toBe(0);
  return /(http:\/\/127\.0\.0\.1:\d+\/login\?token=[\w-]+)/.exec(result.stdout)![1]!;
}

beforeAll(async () => {
  world = await startTelegramE2E({
    binDirs: [inject('codexBinDir'), inject('claudeBinDir')],
    harnessToml: 'inactivity_minutes = 5',
  });
  browser = await openBrowser('console');
  browser.page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  browser.page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspErrors.push(m.text());
  });
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await world?.dispose();
});

describe.skipIf(!process.env.DATABASE_URL)('web console in a browser', () => {
  it('signs in by the one-time link; a run appears and finishes live; transcript, diff, patch', async () => {
    const { page } = browser;
    const link = await loginLink();
    await page.goto(link);
    await page.waitForURL(/\/runs$/);
    expect(await page.locator('h1').textContent()).toBe('Runs');
    // A page that reloaded would lose this; a live update keeps it.
    await page.evaluate('window.stayed = true');

    world.openai.enqueue(
      {
        kind: 'tool_call',
        name: 'exec_command',
        arguments: {
          cmd: "sleep 1; printf '<b>bold</b>' > 'xss-<b onmouseover=alert(5)>.txt'; echo '<script>alert(1)</script>'",
        },
      },
      { kind: 'message', text: 'Done <script>alert(2)</script> wrote the file.' },
    );
    world.telegram.pushUpdate(world.privateMessage(OWNER, '/codex <img src=x onerror=alert(3)> write the file', 10));
    const started = await world.telegram.waitForSent(
      (m) => replyTarget(m) === 10 && m.text.includes('] started'),
      WAIT_MS,
    );
    const runId = runIdOf(started.text);
    const row = page.locator(`tr[data-run="${runId}"]`);
    await row.waitFor({ timeout: WAIT_MS });
    await row.locator('.status-completed').waitFor({ timeout: WAIT_MS });
    expect(await page.evaluate('window.stayed')).toBe(true);
    expect(await row.locator('td.task').textContent()).toContain('<img src=x onerror=alert(3)> write the file');
    await browser.screenshot('runs');

    await row.locator('a').first().click();
    await page.waitForURL(new RegExp(`/runs/${runId}$`));
    const transcript = page.locator('ol.transcript');
    await expect.poll(() => transcript.locator('li.command').count()).toBeGreaterThan(0);
    const command = transcript.locator('li.command').first();
    expect(await command.textContent()).toContain('exit 0');
    const output = command.locator('details');
    expect(await output.locator('pre').isVisible()).toBe(false);
    await output.locator('summary').click();
    expect(await output.locator('pre').textContent()).toContain('<script>alert(1)</script>');
    expect(await transcript.locator('li.message').last().textContent()).toBe(
      'Done <script>alert(2)</script> wrote the file.',
    );
    expect(await page.locator('.diff .file').first().textContent()).toContain('xss-<b onmouseover=alert(5)>.txt');
    expect(await page.locator('.diff .add').allTextContents()).toContain('+<b>bold</b>');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByText('Download .patch').click()]);
    const patch = await readFile((await download.path())!, 'utf8');
    expect(patch).toContain('+<b>bold</b>');
    await browser.screenshot('run');
    // A phone-sized viewport: the page reflows instead of scrolling sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await browser.screenshot('run-phone');
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(dialogs).toEqual([]);
    expect(cspErrors).toEqual([]);
    expect(await axeViolations(page)).toEqual([]);
  });

  it('redelivers a dead letter from the run page, as /redeliver does', async () => {
    const { page } = browser;
    const runId = /\/runs\/(hr_[0-9a-f]{12})/.exec(page.url())![1]!;
    const sql = postgres(world.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
    const [dead] = await sql<
      { id: string }[]
    >`update deliveries set status = 'dead', parts_delivered = 0, platform_message_ids = '[]'::jsonb, last_error = 'marked dead by the test'
      where id = (select id from deliveries where run_id = ${runId} and body like ${`[run ${runId}] completed%`} order by id limit 1)
      returning id`;
    await sql.end();
    const before = world.telegram.sent.filter((m) => m.text.startsWith(`[run ${runId}] completed`)).length;
    await page.reload();
    const button = page.getByRole('button', { name: `Redeliver #${dead!.id}` });
    await button.click();
    await page.getByRole('status').waitFor();
    expect(await page.getByRole('status').textContent()).toMatch(new RegExp(`#${dead!.id}`));
    await world.telegram.waitForSent(
      (m) =>
        m.text.startsWith(`[run ${runId}] completed`) &&
        world.telegram.sent.filter((s) => s.text.startsWith(`[run ${runId}] completed`)).length > before,
      WAIT_MS,
    );
    await page
      .locator(`tr[data-delivery="${dead!.id}"] td:nth-child(3)`)
      .filter({ hasText: 'delivered' })
      .waitFor({ timeout: WAIT_MS });
    await browser.screenshot('redelivered');
  });

  it('answers a tool approval from the page; the chat shows who answered', async () => {
    const { page } = browser;
    world.anthropic.enqueue(
      {
        kind: 'tool_use',
        name: 'Bash',
        input: { command: 'printf approved > approved.txt', description: 'write a file' },
      },
      { kind: 'message', text: 'Wrote approved.txt.' },
    );
    await page.goto(new URL('/approvals', page.url()).toString());
    world.telegram.pushUpdate(world.privateMessage(OWNER, '/claude mode:default write the file', 20));
    const started = await world.telegram.waitForSent(
      (m) => replyTarget(m) === 20 && m.text.includes('] started'),
      WAIT_MS,
    );
    const runId = runIdOf(started.text);
    await world.telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] claude asks to use Bash`), WAIT_MS);
    const card = page.locator('li[data-approval]').filter({ hasText: runId });
    await card.waitFor({ timeout: WAIT_MS });
    expect(await card.locator('pre').textContent()).toContain('printf approved > approved.txt');
    await browser.screenshot('approvals');
    expect(await axeViolations(page)).toEqual([]);
    await card.getByRole('button', { name: 'Allow', exact: true }).click();
    expect(await page.getByRole('status').textContent()).toBe('Answered: Allowed.');
    await world.telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] completed`), WAIT_MS);
    expect(await readFile(join(world.repo, 'approved.txt'), 'utf8')).toBe('approved');
    world.telegram.pushUpdate(world.privateMessage(OWNER, `/runs ${runId}`, 21));
    const view = await world.telegram.waitForSent((m) => replyTarget(m) === 21, WAIT_MS);
    expect(view.text).toMatch(/Bash: printf approved > approved\.txt · asked \S+ · allow by console at /);
  });
});
