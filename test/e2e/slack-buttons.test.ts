/**
 * Buttons on Slack (issue #14 item 2) through `baton start`: the `started` message carries a Block
 * Kit Stop button; a press arrives as a `block_actions` payload over the HTTP request URL (form
 * `payload=`, signed) or Socket Mode (`interactive` envelope). A guest's press changes nothing and
 * is answered "owner only" (ephemeral); the owner's stops the run and leaves no process; the same
 * press delivered twice is acted on once. Runs go to the fake codex (`hang` works until stopped).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findRunProcesses } from '../../src/harness/process-tree.js';
import { startFakeSlack, type BlockActionsPayload, type FakeSlack } from '../fakes/fake-slack.js';
import { WAIT_MS, freePort, runIdOf, startChatE2E, type ChatE2E } from '../support/chat-e2e.js';

const TOKEN = 'xoxb-e2ebuttons1';
const APP_TOKEN = 'xapp-1-e2ebuttons1';
const SIGNING_SECRET = 'fake-signing-secret-for-buttons';
const OWNER = 'UOWNER01';
const GUEST = 'UGUEST01';
const CHANNEL = 'C0PROJECT';

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let waited = 0; !(await condition()); waited += 50) {
    if (waited > WAIT_MS) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

for (const transport of ['http', 'socket'] as const) {
  describe(`Slack buttons (${transport === 'http' ? 'HTTP request URL' : 'Socket Mode'})`, () => {
    let world: ChatE2E;
    let slack: FakeSlack;
    let deliver: (payload: BlockActionsPayload) => Promise<void>;

    beforeAll(async () => {
      if (transport === 'http') {
        const port = await freePort();
        slack = await startFakeSlack({ botToken: TOKEN, events: { url: `http://127.0.0.1:${port}/slack/events`, signingSecret: SIGNING_SECRET } });
        world = await startChatE2E({
          trust: { slack: { owner: OWNER, guests: [GUEST] } },
          env: { SLACK_BOT_TOKEN: TOKEN, SLACK_SIGNING_SECRET: SIGNING_SECRET, SLACK_PORT: String(port), SLACK_API_URL: slack.url },
        });
        deliver = async (payload) => {
          const answer = await slack.deliverInteractive(payload);
          expect(answer.status).toBe(200);
          expect(answer.elapsedMs).toBeLessThan(3_000);
        };
      } else {
        slack = await startFakeSlack({ botToken: TOKEN, appToken: APP_TOKEN });
        world = await startChatE2E({
          trust: { slack: { owner: OWNER, guests: [GUEST] } },
          env: { SLACK_BOT_TOKEN: TOKEN, SLACK_APP_TOKEN: APP_TOKEN, SLACK_API_URL: slack.url },
        });
        await until(() => slack.sockets() === 1, 'the Socket Mode connection');
        deliver = (payload) => slack.deliverInteractiveSocket(payload, WAIT_MS);
      }
    });

    afterAll(async () => {
      await world?.dispose();
      await slack?.close();
    });

    it('Stop under started: a guest is told "owner only", the owner stops the run once, no process is left', async () => {
      const request = slack.userMessage({ kind: 'app_mention', channel: CHANNEL, user: OWNER, text: `<@${slack.bot.userId}> codex hang` });
      if (transport === 'http') expect((await slack.deliver(request)).status).toBe(200);
      else await slack.deliverSocket(request, WAIT_MS);
      const started = await slack.waitForPosted((p) => p.args.thread_ts === request.event.ts && p.args.text!.includes('] started'), WAIT_MS);
      const runId = runIdOf(started.args.text!);
      // The plain text stays for notifications; the blocks show it and the button.
      const blocks = JSON.parse(started.args.blocks!) as { type: string; text?: { text: string }; elements?: { action_id: string; value: string; text: { text: string }; style?: string }[] }[];
      expect(blocks.map((b) => b.type)).toEqual(['section', 'actions']);
      expect(blocks[0]!.text!.text).toBe(started.args.text);
      expect(blocks[1]!.elements!.map((e) => [e.text.text, e.action_id, e.value, e.style])).toEqual([['Stop', 'baton:stop', runId, 'danger']]);
      await until(async () => (await findRunProcesses(runId)).length > 0, 'the run process');

      await deliver(slack.press({ channel: CHANNEL, messageTs: started.message.ts, user: GUEST, actionId: 'baton:stop' }));
      await until(() => slack.ephemerals.some((e) => e.args.user === GUEST), 'the answer to the guest');
      expect(slack.ephemerals.find((e) => e.args.user === GUEST)!.args).toMatchObject({ channel: CHANNEL, text: 'Only the owner can use these buttons.' });
      expect((await findRunProcesses(runId)).length).toBeGreaterThan(0);

      const press = slack.press({ channel: CHANNEL, messageTs: started.message.ts, user: OWNER, actionId: 'baton:stop' });
      await deliver(press);
      await deliver(press);
      await slack.waitForPosted((p) => p.args.text!.startsWith(`[run ${runId}] cancelled`), WAIT_MS);
      await until(() => slack.ephemerals.some((e) => e.args.user === OWNER), 'the answer to the owner');
      expect(slack.ephemerals.find((e) => e.args.user === OWNER)!.args.text).toMatch(/^Stop(ped\.| requested)/);
      await until(async () => (await findRunProcesses(runId)).length === 0, 'no process of the run');
      // A barrier: a later command is answered, so the duplicate press was handled by then.
      const later = slack.userMessage({ kind: 'app_mention', channel: CHANNEL, user: OWNER, text: `<@${slack.bot.userId}> /help` });
      if (transport === 'http') await slack.deliver(later);
      else await slack.deliverSocket(later, WAIT_MS);
      await slack.waitForPosted((p) => p.args.thread_ts === later.event.ts, WAIT_MS);
      expect(slack.ephemerals.filter((e) => e.args.user === OWNER)).toHaveLength(1);
      expect(slack.posted.filter((p) => p.args.text!.startsWith(`[run ${runId}] cancelled`))).toHaveLength(1);
    });
  });
}
