/**
 * Files out on Slack (issue #13 item 2): the real SlackAdapter (Bolt's WebClient, whose
 * `filesUploadV2` runs files.getUploadURLExternal → upload URL → files.completeUploadExternal)
 * against the fake Slack, driven by the real Outbox on a real database: a long outcome goes as
 * its first part plus result.md in the thread; a refused upload gives way to the text parts.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SlackAdapter } from '../../src/channels/slack/adapter.js';
import { systemClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { Outbox } from '../../src/delivery/outbox.js';
import { splitMessage } from '../../src/delivery/split.js';
import { RunStore } from '../../src/store/runs-repo.js';
import type { DocumentJson } from '../../src/store/schema.js';
import { startFakeSlack, type FakeSlack } from '../fakes/fake-slack.js';
import { useTestDatabase, testEngine } from '../support/database.js';

const TOKEN = 'xoxb-unitfake-docs';
const APP_TOKEN = 'xapp-unit-test-docs';

let slack: FakeSlack;
let adapter: SlackAdapter;
const database = useTestDatabase();
let outbox: Outbox;
let dir: string;

beforeAll(async () => {
  slack = await startFakeSlack({ botToken: TOKEN, appToken: APP_TOKEN });
  adapter = new SlackAdapter({
    token: TOKEN,
    transport: { kind: 'socket', appToken: APP_TOKEN },
    apiUrl: slack.url,
    clock: systemClock,
    logger: silentLogger(),
  });
  await adapter.start(async () => {});
  const store = new RunStore(database.db);
  outbox = new Outbox({
    store,
    clock: systemClock,
    logger: silentLogger(),
    adapters: new Map([['slack', adapter]]),
    policy: { backoffBaseMs: 30_000, backoffCapMs: 1_800_000, maxAttempts: 5, maxAgeMs: 86_400_000 },
  });
  dir = await mkdtemp(join(tmpdir(), 'baton-slack-docs-'));
});

afterAll(async () => {
  await adapter?.stop();
  await slack?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const target = { platform: 'slack', chatId: 'C1', threadId: '1.000100', replyToMessageId: '1.000100' };

/** An outcome of about `chars` characters, with a run tag. */
function outcome(chars: number): string {
  const lines = Array.from({ length: Math.ceil(chars / 80) }, (_, i) => `answer line ${i + 1} ${'z'.repeat(60)}`);
  return ['[run hr_aaaaaaaaaaaa] completed · codex', '', ...lines].join('\n');
}

async function resultDocument(body: string): Promise<DocumentJson> {
  const path = join(dir, `result-${Math.random().toString(36).slice(2)}.md`);
  await writeFile(path, body, { mode: 0o600 });
  return {
    path,
    filename: 'result.md',
    use: 'long_body',
    caption: '[run hr_aaaaaaaaaaaa] The whole answer: result.md',
  };
}

describe(`Slack files out (${testEngine})`, () => {
  it('sends a long outcome as its first part plus result.md in the thread, through the three-step upload', async () => {
    const body = outcome(20_000);
    expect(splitMessage(body, adapter.maxMessageLength).length).toBeGreaterThan(3);
    const postedBefore = slack.posted.length;
    const callsBefore = slack.calls.length;
    await outbox.send({ runId: null, kind: 'outcome', target, body, documents: [await resultDocument(body)] });
    const posted = slack.posted.slice(postedBefore);
    expect(posted).toHaveLength(1);
    expect(posted[0]!.args.thread_ts).toBe('1.000100');
    // Only the sending calls: a Socket Mode reconnect (apps.connections.open) may fall in between.
    expect(
      slack.calls
        .slice(callsBefore)
        .map((c) => c.method)
        .filter((m) => /^(chat|files)\./.test(m)),
    ).toEqual(['chat.postMessage', 'files.getUploadURLExternal', 'files.completeUploadExternal']);
    const upload = slack.uploads.at(-1)!;
    expect(upload.filename).toBe('result.md');
    expect(upload.content.toString('utf8')).toBe(body);
    expect(upload.args).toMatchObject({
      channel_id: 'C1',
      thread_ts: '1.000100',
      initial_comment: '[run hr_aaaaaaaaaaaa] The whole answer: result.md',
    });
  });

  it('sends the remaining parts as text when Slack refuses the upload', async () => {
    const body = outcome(20_000);
    const postedBefore = slack.posted.length;
    const uploadsBefore = slack.uploads.length;
    slack.failNext('files.getUploadURLExternal', { error: 'not_allowed_token_type' });
    await outbox.send({ runId: null, kind: 'outcome', target, body, documents: [await resultDocument(body)] });
    expect(slack.uploads.length).toBe(uploadsBefore);
    const texts = slack.posted.slice(postedBefore).map((p) => p.args.text);
    expect(texts).toHaveLength(splitMessage(body, adapter.maxMessageLength).length);
  });

  it('sends a Markdown outcome as mrkdwn through the outbox: code blocks kept, the rest escaped, with its Resume button in mrkdwn sections', async () => {
    const before = slack.posted.length;
    const body =
      '[run hr_aaaaaaaaaaaa] failed · codex · /srv/a<b>\nDiagnostics:\n```\nerror: <@U123> & more\n```\nResume: `codex exec resume 1`\n\nI did **half**.';
    await outbox.send({
      runId: null,
      kind: 'outcome',
      format: 'markdown',
      target,
      body,
      buttons: [{ label: 'Resume', action: 'resume', arg: 'hr_aaaaaaaaaaaa' }],
    });
    const [posted] = slack.posted.slice(before);
    expect(posted!.args.mrkdwn).toBe('true');
    expect(posted!.args.text).toBe(
      '[run hr_aaaaaaaaaaaa] failed · codex · /srv/a&lt;b&gt;\nDiagnostics:\n```\nerror: &lt;@U123&gt; &amp; more\n```\nResume: `codex exec resume 1`\n\nI did *half*.',
    );
    const blocks = JSON.parse(String(posted!.args.blocks)) as { type: string; text?: { type: string; text: string } }[];
    expect(blocks[0]!.text).toEqual({ type: 'mrkdwn', text: posted!.args.text });
  });
});
