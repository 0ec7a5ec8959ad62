/**
 * Files with a task from the terminal (issue #13): `baton ask --file` with the real codex and
 * claude CLIs against the fake model servers. An image reaches the model as image bytes (codex
 * `--image=FILE`, claude an image block on stdin); a text file becomes part of the task.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { isMessagesCall, startFakeAnthropic, type FakeAnthropic } from '../fakes/fake-anthropic.js';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai.js';
import { makeClaudeConfigDir } from '../support/claude-home.js';
import { makeCliHome, type CliHome } from '../support/cli.js';
import { makeCodexHome } from '../support/codex-home.js';

/** A valid 1×1 PNG (codex decodes images and drops broken ones); its base64 must reach the model. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
let home: CliHome;
let scratch: string;
let screenshot: string;
let notes: string;

beforeAll(async () => {
  openai = await startFakeOpenAI();
  anthropic = await startFakeAnthropic();
  scratch = await mkdtemp(join(tmpdir(), 'ask-files-'));
  const codexHome = await makeCodexHome(join(scratch, 'codex'), openai.url);
  const claudeDir = await makeClaudeConfigDir(join(scratch, 'claude'), anthropic.url);
  home = await makeCliHome({
    binDirs: [inject('codexBinDir'), inject('claudeBinDir')],
    harnessToml: `codex_home = ${JSON.stringify(codexHome)}\nclaude_config_dir = ${JSON.stringify(claudeDir)}`,
  });
  screenshot = join(scratch, 'layout bug.png');
  notes = join(scratch, 'notes.txt');
  await writeFile(screenshot, PNG);
  await writeFile(notes, 'The header overlaps the menu on narrow screens.\n');
});
afterAll(async () => {
  await home?.dispose();
  await openai?.close();
  await anthropic?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('baton ask --file', () => {
  it('codex: the image reaches the model as an image, the text file as part of the task', async () => {
    openai.enqueue({ kind: 'message', text: 'I see the screenshot.' });
    const before = openai.requests.length;
    const result = await home.baton([
      'ask',
      '--vendor',
      'codex',
      '--file',
      screenshot,
      '--file',
      notes,
      'fix the layout bug shown in this screenshot',
    ]);
    expect(result.stdout).toMatch(
      new RegExp(`started · codex · \\S+ · with layout bug\\.png \\(${PNG.length} B\\), notes\\.txt \\(48 B\\)`),
    );
    expect(result.stdout).toContain('I see the screenshot.');
    const sent = JSON.stringify(openai.requests.slice(before).map((r) => r.body));
    // Booleans, not toContain: the request bodies are tens of KB.
    expect(
      sent.includes(`data:image/png;base64,${PNG.toString('base64')}`),
      'image bytes in the Responses request',
    ).toBe(true);
    expect(
      sent.includes('--- Attached file: notes.txt ---\\nThe header overlaps the menu'),
      'text file in the task',
    ).toBe(true);
    expect(result.exitCode).toBe(0);
  });

  it('claude: the image reaches the model as an image block', async () => {
    anthropic.enqueue({ kind: 'message', text: 'I see the screenshot too.' });
    const before = anthropic.requests.length;
    const result = await home.baton([
      'ask',
      '--vendor',
      'claude',
      '--file',
      screenshot,
      'fix the layout bug shown in this screenshot',
    ]);
    expect(result.stdout).toContain('I see the screenshot too.');
    const call = anthropic.requests.slice(before).filter(isMessagesCall).at(-1);
    const sent = JSON.stringify(call?.body);
    expect(
      sent.includes(`"media_type":"image/png","data":"${PNG.toString('base64')}"`),
      'image block in the Messages request',
    ).toBe(true);
    expect(sent.includes('fix the layout bug shown in this screenshot'), 'task text in the Messages request').toBe(
      true,
    );
    expect(result.exitCode).toBe(0);
  });

  it('refuses a file that is neither an image nor text, naming it, and starts nothing', async () => {
    const binary = join(scratch, 'tool.bin');
    await writeFile(binary, Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 0]));
    const result = await home.baton(['ask', '--vendor', 'codex', '--file', binary, 'run this']);
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toMatch(/^tool\.bin is neither an image \(PNG, JPEG, GIF, WebP\) nor UTF-8 text/);
    expect(result.stdout).not.toContain('started');
  });
});
