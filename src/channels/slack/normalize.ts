/**
 * Slack Events API envelope → {@link InboundMessage}. Slack API facts: "Events API"
 * (`event_callback` envelopes carry `event_id`, the dedupe key), events `app_mention` (mentions in
 * channels; never sent for direct messages) and `message.im` (`message` with `channel_type: "im"`),
 * and "Message subtypes".
 */
import type { IncomingAttachment, IncomingVoice, InboundMessage } from '../types.js';
import { decodeSlackText, stripBotMention } from './text.js';

/** The fields of a Slack message-like event baton reads. */
export interface SlackMessageEvent {
  type: string;
  subtype?: string | undefined;
  channel: string;
  /** `im` for a direct message (on `message` events). */
  channel_type?: string | undefined;
  user?: string | undefined;
  bot_id?: string | undefined;
  text?: string | undefined;
  ts: string;
  /** The thread's parent `ts`, when the message is in a thread. */
  thread_ts?: string | undefined;
  user_profile?:
    | { display_name?: string | undefined; real_name?: string | undefined; name?: string | undefined }
    | undefined;
  /** Files shared with the message (`file_share`; Slack "File object"). */
  files?: SlackFile[] | undefined;
}

/** The fields of a Slack file object baton reads. */
export interface SlackFile {
  id: string;
  name?: string | undefined;
  /** In bytes. */
  size?: number | undefined;
  /** Download URL; needs the bot token and the `files:read` scope. */
  url_private_download?: string | undefined;
  url_private?: string | undefined;
  /** Media type, e.g. `audio/webm` for an audio clip recorded in Slack. */
  mimetype?: string | undefined;
  /** `slack_audio` for an audio clip recorded in Slack. */
  subtype?: string | undefined;
  /** Length of an audio or video clip, in ms. */
  duration_ms?: number | undefined;
}

/** An audio clip recorded in Slack (`subtype` `slack_audio`), or another shared audio file. */
function isSlackAudio(file: SlackFile): boolean {
  return file.subtype === 'slack_audio' || file.mimetype?.startsWith('audio/') === true;
}

/** The audio clip of a message, with the length and media type Slack announced. */
function slackVoiceOf(
  files: readonly SlackFile[],
  attach: (file: SlackFile) => IncomingAttachment,
): IncomingVoice | undefined {
  const clip = files.find(isSlackAudio);
  if (!clip) return undefined;
  return {
    ...attach(clip),
    durationSeconds: clip.duration_ms === undefined ? undefined : Math.ceil(clip.duration_ms / 1000),
    mimeType: clip.mimetype,
  };
}

/** The fields of an `event_callback` envelope baton reads. */
export interface SlackEventEnvelope {
  event_id: string;
  event: SlackMessageEvent;
}

/**
 * The inbox dedupe key of a Slack message: its channel and `ts` ("message `ts` values are unique
 * per channel"), not the envelope's `event_id`. A redelivery (`x-slack-retry-num`) repeats the
 * event id, but the same message can also arrive as a second event with an id of its own (an
 * `app_mention` and a `message.im` of one direct message, or an event Slack re-sends under a new
 * id); keying by the message makes every such copy one message. `client_msg_id` would do the same
 * for messages typed in a client, but messages posted through the API have none.
 */
export function slackDedupeKey(event: Pick<SlackMessageEvent, 'channel' | 'ts'>): string {
  return `${event.channel}:${event.ts}`;
}

/**
 * Arrival order of two stored envelopes: by message `ts` (seconds and microseconds, compared as
 * integers; a JavaScript number would round the 16 digits).
 */
export function compareSlackEnvelopes(a: SlackEventEnvelope, b: SlackEventEnvelope): number {
  return compareSlackTs(a.event.ts, b.event.ts);
}

/** Order of two Slack timestamps (`seconds.micros`), as integers; a malformed one sorts first. */
export function compareSlackTs(a: string, b: string): number {
  const parts = (ts: string): [bigint, bigint] => {
    const [seconds = '0', micros = '0'] = ts.split('.');
    return /^\d+$/.test(seconds) && /^\d*$/.test(micros)
      ? [BigInt(seconds), BigInt(micros.padEnd(6, '0') || '0')]
      : [0n, 0n];
  };
  const [as, am] = parts(a);
  const [bs, bm] = parts(b);
  return as !== bs ? (as < bs ? -1 : 1) : am === bm ? 0 : am < bm ? -1 : 1;
}

/** This app's identity, from `auth.test` (`user_id`, `bot_id`). */
export interface SlackBotIdentity {
  userId: string;
  botId: string;
}

/** Message subtypes that are a person (or bot) posting text; edits, joins, deletions are not. */
const POSTED_SUBTYPES = new Set([undefined, 'bot_message', 'file_share', 'thread_broadcast', 'me_message']);

/**
 * Normalizes an `app_mention` or `message.im` event, or returns undefined when it is no posted
 * text meant for this app (a channel message without mention, an edit, a join).
 *
 * The reply target is the request's thread: `threadId` is `thread_ts ?? ts`, and a message that is
 * itself in a thread replies to its parent (`replyToMessageId` = `thread_ts`). A message outside a
 * thread is `topLevel`: its conversation is the channel's (or DM's) top level. The thread's run
 * message (`replyToBotText`) is the adapter's to look up; see {@link needsThreadLookup}.
 */
export function normalizeSlackEvent(
  envelope: SlackEventEnvelope,
  bot: SlackBotIdentity,
  receivedAt: Date,
  attach?: (file: SlackFile) => IncomingAttachment,
): InboundMessage | undefined {
  const { event } = envelope;
  const isDirect = event.type === 'message' && event.channel_type === 'im';
  if (event.type !== 'app_mention' && !isDirect) return undefined;
  if (!POSTED_SUBTYPES.has(event.subtype)) return undefined;
  const senderId = event.user ?? event.bot_id;
  if (senderId === undefined) return undefined;
  const profile = event.user_profile;
  const inThread = event.thread_ts !== undefined && event.thread_ts !== event.ts;
  const voice = attach && event.files?.length ? slackVoiceOf(event.files, attach) : undefined;
  return {
    platform: 'slack',
    dedupeKey: slackDedupeKey(event),
    chatId: event.channel,
    isDirect,
    threadId: event.thread_ts ?? event.ts,
    ...(inThread ? {} : { topLevel: true }),
    ...(event.type === 'app_mention' ? { mentioned: true } : {}),
    messageId: event.ts,
    senderId,
    senderName: profile?.display_name || profile?.real_name || profile?.name || senderId,
    senderIsBot: event.bot_id !== undefined || event.subtype === 'bot_message' || senderId === bot.userId,
    text: decodeSlackText(stripBotMention(event.text ?? '', bot.userId)).trim(),
    ...(inThread ? { replyToMessageId: event.thread_ts! } : {}),
    ...(voice ? { voice } : attach && event.files?.length ? { attachments: event.files.map(attach) } : {}),
    receivedAt,
  };
}

/**
 * Whether the thread's run message can matter: a person wrote inside a thread. Its parent is
 * usually the person's own request, not a message baton sent, so the dispatcher needs the text
 * of baton's latest `[run …]` message in that thread to find the run.
 */
export function needsThreadLookup(message: InboundMessage): boolean {
  return message.replyToMessageId !== undefined && !message.senderIsBot;
}
