/**
 * Storing a Slack event before Slack is acknowledged: a Bolt receiver in front of the
 * transport's own, and what of a received body goes to the inbox.
 */
import type { App, Receiver, ReceiverEvent } from '@slack/bolt';
import { normalizeSlackEvent, type SlackBotIdentity, type SlackEventEnvelope } from './normalize.js';
import { batonActions, slackPressKey, type SlackBlockActions } from './presses.js';

/**
 * Longest wait for a press's inbox write before the press is acknowledged anyway, in ms: well
 * inside the 3 s Slack gives an interaction ("Handling user interaction").
 */
const PRESS_STORE_WAIT_MS = 1_000;

/**
 * A Bolt receiver in front of the transport's own (HTTP or Socket Mode): each event is first given
 * to `store`, and only once that resolves to Bolt's `App.processEvent`, which acknowledges Events
 * API events before it runs any listener (@slack/bolt 5.1.0 `App.processEvent`: "Events API
 * requests are acknowledged right away"; neither receiver offers a hook between receipt and ack,
 * and `processBeforeResponse` would hold the HTTP answer until the whole command is handled). A
 * failed store throws before the ack: HTTPReceiver answers 500 and SocketModeReceiver sends no
 * ack, so Slack delivers the event again.
 */
export class InboxFirstReceiver implements Receiver {
  constructor(
    private readonly transport: Receiver,
    private readonly store: (body: ReceiverEvent['body']) => Promise<void>,
  ) {}

  init(app: App): void {
    // The transport receivers use nothing of the app but processEvent.
    const front = {
      processEvent: async (event: ReceiverEvent): Promise<void> => {
        if ((event.body as { type?: string }).type === 'block_actions') {
          // A press must be acknowledged within Slack's 3 s, whatever the database does: waited for
          // PRESS_STORE_WAIT_MS at most, then acknowledged; the dispatcher's claim acts on it once
          // the database answers (a press lost to a crash in that gap is pressed again).
          const stored = this.store(event.body);
          stored.catch(() => undefined);
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([
            stored.catch(() => undefined),
            new Promise<void>((resolve) => (timer = setTimeout(resolve, PRESS_STORE_WAIT_MS))),
          ]);
          clearTimeout(timer);
          await app.processEvent(event);
          return;
        }
        await this.store(event.body);
        await app.processEvent(event);
      },
    };
    this.transport.init(front as unknown as App);
  }

  start(...args: unknown[]): Promise<unknown> {
    return this.transport.start(...args);
  }

  stop(...args: unknown[]): Promise<unknown> {
    return this.transport.stop(...args);
  }
}

/**
 * What of a received Slack body goes to the inbox before Slack is acknowledged: a message meant
 * for baton (the app's own and other bots' messages, edits, joins and channel messages without a
 * mention are never stored: they would be replayed forever), or a press of a baton button.
 */
export function inboxEntriesOf(
  body: ReceiverEvent['body'],
  bot: SlackBotIdentity,
  now: Date,
): { dedupeKey: string; receivedAt: Date; payload: unknown }[] {
  const typed = body as { type?: string; event?: unknown };
  if (typed.type === 'block_actions') {
    const payload = body as unknown as SlackBlockActions;
    return batonActions(payload).map((action) => ({
      dedupeKey: slackPressKey(payload, action),
      receivedAt: now,
      payload,
    }));
  }
  if (typed.type !== 'event_callback' || !typed.event) return [];
  const message = normalizeSlackEvent(body as unknown as SlackEventEnvelope, bot, now);
  if (!message || message.senderIsBot) return [];
  return [{ dedupeKey: message.dedupeKey, receivedAt: message.receivedAt, payload: body }];
}
