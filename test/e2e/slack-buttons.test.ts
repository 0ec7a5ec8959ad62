/**
 * Buttons on Slack (issue #14 item 2) through `baton start`: the `started` message carries a Block
 * Kit Stop button; a press arrives as a `block_actions` payload over the HTTP request URL (form
 * `payload=`, signed) or Socket Mode (`interactive` envelope). A guest's press changes nothing and
 * is answered "owner only" (ephemeral); the owner's stops the run and leaves no process; the same
 * press delivered twice is acted on once. Runs go to the fake codex (`hang` works until stopped).
 */
import { access, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { findRunProcesses } from '../../src/harness/process-tree.js';
import { serviceStatePath } from '../../src/service/control-api/service-state.js';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/fake-anthropic.js';
import { startFakeSlack, type BlockActionsPayload, type FakeSlack, type PostedMessage } from '../fakes/fake-slack.js';
import { WAIT_MS, freePort, runIdOf, startChatE2E, type ChatE2E } from '../support/chat-e2e.js';
import { waitFor } from '../support/wait.js';

const TOKEN = 'xoxb-e2ebuttons1';
const APP_TOKEN = 'xapp-1-e2ebuttons1';
const SIGNING_SECRET = 'fake-signing-secret-for-buttons';
const OWNER = 'UOWNER01';
const GUEST = 'UGUEST01';
const CHANNEL = 'C0PROJECT';

for (const transport of ['http', 'socket'] as const) {
  describe(`Slack buttons (${transport === 'http' ? 'HTTP request URL' : 'Socket Mode'})`, () => {
    let world: ChatE2E;
    let slack: FakeSlack;
    let deliver: (payload: BlockActionsPayload) => Promise<void>;

    beforeAll(async () => {
      if (transport === 'http') {
        const port = await freePort();
        slack = await startFakeSlack({
          botToken: TOKEN,
          events: { url: `http://127.0.0.1:${port}/slack/events`, signingSecret: SIGNING_SECRET },
        });
        world = await startChatE2E({
          trust: { slack: { owner: OWNER, guests: [GUEST] } },
          env: {
            SLACK_BOT_TOKEN: TOKEN,
            SLACK_SIGNING_SECRET: SIGNING_SECRET,
            SLACK_PORT: String(port),
            SLACK_API_URL: slack.url,
          },
        });
        deliver = async (payload) => {
          const answer = await slack.deliverInteractive(payload);
          expect(answer.status).toBe(200);
        };
      } else {
        slack = await startFakeSlack({ botToken: TOKEN, appToken: APP_TOKEN });
        world = await startChatE2E({
          trust: { slack: { owner: OWNER, guests: [GUEST] } },
          env: { SLACK_BOT_TOKEN: TOKEN, SLACK_APP_TOKEN: APP_TOKEN, SLACK_API_URL: slack.url },
        });
        await waitFor(() => slack.sockets() === 1, {
          what: 'the Socket Mode connection',
          timeoutMs: WAIT_MS,
          intervalMs: 50,
        });
        deliver = (payload) => slack.deliverInteractiveSocket(payload, WAIT_MS);
      }
    });

    afterAll(async () => {
      await world?.dispose();
      await slack?.close();
    });

    it('Stop under started: a guest is told "owner only", the owner stops the run once, no process is left', async () => {
      const request = slack.userMessage({
        kind: 'app_mention',
        channel: CHANNEL,
        user: OWNER,
        text: `<@${slack.bot.userId}> codex hang`,
      });
      if (transport === 'http') expect((await slack.deliver(request)).status).toBe(200);
      else await slack.deliverSocket(request, WAIT_MS);
      const started = await slack.waitForPosted(
        (p) => p.args.thread_ts === request.event.ts && p.args.text!.includes('] started'),
        WAIT_MS,
      );
      const runId = runIdOf(started.args.text!);
      // The plain text stays for notifications; the blocks show it and the button.
      const blocks = JSON.parse(started.args.blocks!) as {
        type: string;
        text?: { text: string };
        elements?: { action_id: string; value: string; text: { text: string }; style?: string }[];
      }[];
      expect(blocks.map((b) => b.type)).toEqual(['section', 'actions']);
      expect(blocks[0]!.text!.text).toBe(started.args.text);
      expect(blocks[1]!.elements!.map((e) => [e.text.text, e.action_id, e.value, e.style])).toEqual([
        ['Stop', 'baton:stop', runId, 'danger'],
      ]);
      await waitFor(async () => (await findRunProcesses(runId)).length > 0, {
        what: 'the run process',
        timeoutMs: WAIT_MS,
        intervalMs: 50,
      });

      await deliver(
        slack.press({ channel: CHANNEL, messageTs: started.message.ts, user: GUEST, actionId: 'baton:stop' }),
      );
      await waitFor(() => slack.ephemerals.some((e) => e.args.user === GUEST), {
        what: 'the answer to the guest',
        timeoutMs: WAIT_MS,
        intervalMs: 50,
      });
      expect(slack.ephemerals.find((e) => e.args.user === GUEST)!.args).toMatchObject({
        channel: CHANNEL,
        text: 'Only the owner can use these buttons.',
      });
      expect((await findRunProcesses(runId)).length).toBeGreaterThan(0);

      const press = slack.press({
        channel: CHANNEL,
        messageTs: started.message.ts,
        user: OWNER,
        actionId: 'baton:stop',
      });
      await deliver(press);
      await deliver(press);
      await slack.waitForPosted((p) => p.args.text!.startsWith(`[run ${runId}] cancelled`), WAIT_MS);
      await waitFor(() => slack.ephemerals.some((e) => e.args.user === OWNER), {
        what: 'the answer to the owner',
        timeoutMs: WAIT_MS,
        intervalMs: 50,
      });
      expect(slack.ephemerals.find((e) => e.args.user === OWNER)!.args.text).toMatch(/^Stop(ped\.| requested)/);
      await waitFor(async () => (await findRunProcesses(runId)).length === 0, {
        what: 'no process of the run',
        timeoutMs: WAIT_MS,
        intervalMs: 50,
      });
      // A barrier: a later command is answered, so the duplicate press was handled by then.
      const later = slack.userMessage({
        kind: 'app_mention',
        channel: CHANNEL,
        user: OWNER,
        text: `<@${slack.bot.userId}> /help`,
      });
      if (transport === 'http') await slack.deliver(later);
      else await slack.deliverSocket(later, WAIT_MS);
      await slack.waitForPosted((p) => p.args.thread_ts === later.event.ts, WAIT_MS);
      expect(slack.ephemerals.filter((e) => e.args.user === OWNER)).toHaveLength(1);
      expect(slack.posted.filter((p) => p.args.text!.startsWith(`[run ${runId}] cancelled`))).toHaveLength(1);
    });
  });
}

describe('tool approvals and Redeliver on Slack (the real claude, Socket Mode)', () => {
  let world: ChatE2E;
  let slack: FakeSlack;
  let anthropic: FakeAnthropic;

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    slack = await startFakeSlack({ botToken: TOKEN, appToken: APP_TOKEN });
    world = await startChatE2E({
      trust: { slack: { owner: OWNER, guests: [GUEST] } },
      env: { SLACK_BOT_TOKEN: TOKEN, SLACK_APP_TOKEN: APP_TOKEN, SLACK_API_URL: slack.url },
      claude: { binDir: inject('claudeBinDir'), anthropicUrl: anthropic.url },
    });
    await waitFor(() => slack.sockets() === 1, {
      what: 'the Socket Mode connection',
      timeoutMs: WAIT_MS,
      intervalMs: 50,
    });
  });
  afterAll(async () => {
    await world?.dispose();
    await slack?.close();
    await anthropic?.close();
  });

  /** The buttons under a posted message, as `label → action_id`. */
  const buttonsOf = (p: PostedMessage): Record<string, string> => {
    const blocks = JSON.parse(p.args.blocks ?? '[]') as {
      type: string;
      elements?: { action_id: string; text: { text: string } }[];
    }[];
    return Object.fromEntries(
      blocks
        .filter((b) => b.type === 'actions')
        .flatMap((b) => b.elements!)
        .map((e) => [e.text.text, e.action_id]),
    );
  };

  /** Presses `label` under `p` as `user`; resolves with the ephemeral answer. */
  async function pressOn(p: PostedMessage, label: string, user = OWNER): Promise<string> {
    const actionId = buttonsOf(p)[label];
    if (!actionId) throw new Error(`no button ${label} under ${JSON.stringify(p.args.text)}`);
    const before = slack.ephemerals.length;
    await slack.deliverInteractiveSocket(
      slack.press({ channel: CHANNEL, messageTs: p.message.ts, user, actionId }),
      WAIT_MS,
    );
    await waitFor(() => slack.ephemerals.slice(before).some((e) => e.args.user === user), {
      what: `the answer to ${label}`,
      timeoutMs: WAIT_MS,
      intervalMs: 50,
    });
    return slack.ephemerals.slice(before).find((e) => e.args.user === user)!.args.text!;
  }

  const mention = async (text: string) => {
    const request = slack.userMessage({
      kind: 'app_mention',
      channel: CHANNEL,
      user: OWNER,
      text: `<@${slack.bot.userId}> ${text}`,
    });
    await slack.deliverSocket(request, WAIT_MS);
    return request;
  };

  it('the HTTP port is open (service.json written) before the channel connects, so a replayed approval run can ask', async () => {
    // Slack replays stored events as it starts; a claude run they launch needs the port by then.
    const recorded = await stat(serviceStatePath(world.batonHome));
    const firstCall = slack.calls.find((c) => c.method === 'auth.test');
    expect(firstCall).toBeDefined();
    expect(Math.floor(recorded.mtimeMs)).toBeLessThanOrEqual(firstCall!.atMs);
  });

  it(
    'shows the command with Allow / Allow for this run / Deny; a guest press changes nothing; Allow runs it',
    async () => {
      anthropic.enqueue(
        { kind: 'tool_use', name: 'Bash', input: { command: 'touch approved.txt' } },
        { kind: 'message', text: 'Created approved.txt.' },
      );
      const request = await mention('/claude approve create approved.txt');
      const started = await slack.waitForPosted(
        (p) => p.args.thread_ts === request.event.ts && p.args.text!.includes('] started'),
        WAIT_MS,
      );
      const runId = runIdOf(started.args.text!);
      const ask = await slack.waitForPosted(
        (p) => p.args.text!.startsWith(`[run ${runId}] claude asks to use Bash`),
        WAIT_MS,
      );
      expect(ask.args.text!.split('\n')[1]).toBe('$ touch approved.txt');
      expect(Object.keys(buttonsOf(ask))).toEqual(['Allow', 'Allow for this run', 'Deny']);
      expect(await pressOn(ask, 'Allow', GUEST)).toBe('Only the owner can use these buttons.');
      expect(
        await access(join(world.repo, 'approved.txt')).then(
          () => true,
          () => false,
        ),
      ).toBe(false);
      expect(await pressOn(ask, 'Allow')).toBe('Allowed.');
      // The card's buttons gave way to the decision (chat.update with no actions block).
      const update = slack.updates.find((u) => u.args.ts === ask.message.ts);
      expect(update?.args.text).toMatch(/\n\n✓ Allowed\.$/);
      expect((JSON.parse(update!.args.blocks ?? '[]') as { type: string }[]).map((b) => b.type)).not.toContain(
        'actions',
      );
      await expect(pressOn(ask, 'Deny')).rejects.toThrow(/has no button baton:deny/);
      const done = await slack.waitForPosted((p) => p.args.text!.startsWith(`[run ${runId}] completed`), WAIT_MS);
      expect(done.args.text).not.toContain('denied');
      expect(
        await access(join(world.repo, 'approved.txt')).then(
          () => true,
          () => false,
        ),
      ).toBe(true);
    },
    4 * WAIT_MS,
  );

  it('/runs dead letters carry Redeliver, which resends a dead letter once', async () => {
    // A refusal that will not change: the reply is dead-lettered at once.
    slack.failNext('chat.postMessage', { error: 'channel_not_found' });
    const whoami = await mention('/whoami');
    await waitFor(
      () => slack.calls.some((c) => c.method === 'chat.postMessage' && c.args.thread_ts === whoami.event.ts),
      { what: 'the refused reply', timeoutMs: WAIT_MS, intervalMs: 50 },
    );
    const runs = await mention('/runs');
    const list = await slack.waitForPosted((p) => p.args.thread_ts === runs.event.ts, WAIT_MS);
    const label = Object.keys(buttonsOf(list)).find((l) => l.startsWith('Redeliver #'));
    expect(label).toBeDefined();
    const letter = label!.slice('Redeliver '.length);
    expect(await pressOn(list, label!)).toBe(`${letter} sent again.`);
    await slack.waitForPosted(
      (p) => p.args.thread_ts === whoami.event.ts && p.args.text!.startsWith('Your slack user id'),
      WAIT_MS,
    );
    expect(await pressOn(list, label!)).toBe(`${letter} is not a dead letter (see /runs for the list).`);
    expect(slack.posted.filter((p) => p.args.thread_ts === whoami.event.ts)).toHaveLength(1);
  });
});
