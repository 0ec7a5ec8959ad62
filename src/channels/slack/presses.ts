/**
 * Presses of baton's Block Kit buttons on Slack (`block_actions` payloads): the payload shapes
 * baton reads, their dedupe key, and the handing of one press to the press handler.
 */
import type { webApi } from '@slack/bolt';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { staleButtonAnswer } from '../../wording/channels.js';
import type { ChannelInbox } from '../inbox.js';
import type { PressHandler } from '../types.js';
import { SLACK_ACTION_PREFIX } from './buttons.js';
import { describeSlackError } from './errors.js';
import type { SlackEventEnvelope } from './normalize.js';
import { escapeSlackText } from './text.js';

/** The parts of a Slack `block_actions` payload baton reads (Slack "block_actions payloads"). */
export interface SlackBlockActions {
  type: 'block_actions';
  trigger_id?: string;
  actions?: SlackButtonAction[];
  user?: { id?: string };
  channel?: { id?: string };
  container?: { channel_id?: string; message_ts?: string };
  message?: { ts?: string; thread_ts?: string };
}

/** One pressed button element of a `block_actions` payload. */
export interface SlackButtonAction {
  action_id: string;
  value?: string;
  action_ts?: string;
}

/** What the Slack inbox keeps: an Events API envelope, or a `block_actions` payload (a press). */
export type SlackStored = SlackEventEnvelope | SlackBlockActions;

/** Whether a stored body is a press. */
export function isBlockActions(stored: SlackStored): stored is SlackBlockActions {
  return (stored as { type?: string }).type === 'block_actions';
}

/** The pressed baton buttons of a payload (one in practice: a press is one button). */
export function batonActions(body: SlackBlockActions): SlackButtonAction[] {
  return (body.actions ?? []).filter(
    (a) => typeof a.action_id === 'string' && a.action_id.startsWith(SLACK_ACTION_PREFIX),
  );
}

/** The dedupe key of a press: the payload's `trigger_id` (one per user interaction), else the message ts plus the action's `action_ts`. */
export function slackPressKey(body: SlackBlockActions, action: SlackButtonAction): string {
  return body.trigger_id ?? `${body.container?.message_ts ?? body.message?.ts ?? ''}:${action.action_ts ?? ''}`;
}

/** What handling a press needs. */
export interface SlackPressContext {
  client: webApi.WebClient;
  clock: Clock;
  logger: Logger;
  secrets: readonly string[];
  presses: PressHandler | undefined;
  inbox: ChannelInbox<SlackStored> | undefined;
}

/**
 * One `block_actions` press of a baton button, normalized and handed to the press handler. The
 * dedupe key is {@link slackPressKey}. The answer is an ephemeral message (`chat.postEphemeral`)
 * only the presser sees, in the message's thread. The press was stored in the inbox before
 * Slack had its ack (like a message); the dispatcher's claim by dedupe key keeps a redelivered
 * or replayed press from acting twice.
 */
export async function handleSlackPress(
  context: SlackPressContext,
  body: SlackBlockActions,
  action: SlackButtonAction,
): Promise<void> {
  const { client, clock, logger, secrets, presses, inbox } = context;
  const channel = body.channel?.id ?? body.container?.channel_id;
  const messageTs = body.container?.message_ts ?? body.message?.ts;
  const user = body.user?.id;
  const dedupeKey = slackPressKey(body, action);
  // Not under a message baton can answer in (a modal, a stray payload): never acted on, so not kept.
  if (!channel || !messageTs || !user) return inbox?.forget(dedupeKey);
  const threadTs = body.message?.thread_ts;
  let answered = false;
  const answer = async (text: string): Promise<void> => {
    if (answered) return;
    answered = true;
    await client.chat
      .postEphemeral({ channel, user, text: escapeSlackText(text), ...(threadTs ? { thread_ts: threadTs } : {}) })
      .catch((err: unknown) =>
        logger.info({ channel: 'slack', err: describeSlackError(err, secrets) }, 'could not answer a button press'),
      );
  };
  if (!presses || !action.action_id.startsWith(SLACK_ACTION_PREFIX)) {
    await inbox?.forget(dedupeKey);
    await answer(staleButtonAnswer);
    return;
  }
  const press = {
    platform: 'slack' as const,
    dedupeKey,
    chatId: channel,
    ...(threadTs ? { threadId: threadTs } : {}),
    messageId: messageTs,
    senderId: user,
    isDirect: channel.startsWith('D'),
    action: action.action_id.slice(SLACK_ACTION_PREFIX.length),
    arg: action.value ?? '',
    receivedAt: clock.now(),
    answer,
  };
  await (inbox ? inbox.track(dedupeKey, () => presses(press)) : presses(press));
}
