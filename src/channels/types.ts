/**
 * The adapter contract every chat platform implements. Adapters normalize platform traffic into
 * {@link InboundMessage}s and send {@link OutboundMessage}s; they make no decisions (trust,
 * commands and dedupe live in the dispatcher, which never sees an SDK type).
 */
import { BatonError } from '../core/errors.js';
import type { Readable } from 'node:stream';
import type { ButtonJson } from '../core/buttons.js';

/** A file offered with a message, not yet downloaded. */
export interface IncomingAttachment {
  /** The name the sender gave it (shown, never trusted as a path or a type). */
  name: string;
  /** Size the platform announced, in bytes, when it did: lets an oversize file be refused before any download. */
  sizeBytes?: number | undefined;
  /**
   * The file is the rest of the message: a chat client turned a long paste into it (Discord's
   * `message.txt`). Its text joins the message text before the command is read.
   */
  pastedText?: boolean;
  /**
   * Opens the file's bytes (a platform download, or a local file for `baton ask`).
   *
   * @param signal aborts the download (its deadlines passed, or the launch was stopped).
   * @throws Error when the platform refuses or the network fails (the caller answers with it).
   */
  open(signal?: AbortSignal): Promise<Readable>;
}

/** A voice note or audio clip offered with a message, not yet downloaded (owner only, for transcription). */
export interface IncomingVoice extends IncomingAttachment {
  /** Length the platform announced, in seconds (Telegram `duration`, Discord `duration_secs`). */
  durationSeconds?: number | undefined;
  /** Media type the platform announced, e.g. `audio/ogg`. */
  mimeType?: string | undefined;
}

/** Platforms baton talks to. `terminal` is `baton ask`. */
export type Platform = 'telegram' | 'slack' | 'discord' | 'terminal';

/** The chat platforms, each configured by its `[channels.*]` table and its bot token. */
export type ChannelPlatform = Exclude<Platform, 'terminal'>;

/** What a platform's conversations allow, so that deciding code never compares platform names. */
export interface PlatformAbilities {
  /** Commands are read without their slash as well (Slack and Discord keep `/` for their own commands). */
  readonly bareCommands: boolean;
  /** Every sender is the owner: the local terminal of `baton ask`, which only the machine's user reaches. */
  readonly senderIsOwner: boolean;
  /** A run may ask the owner for tool approvals here (its cards' buttons reach the owner in the chat). */
  readonly toolApprovals: boolean;
  /**
   * Length, in UTF-16 units, at which the platform's clients split a long paste into several
   * messages (Telegram clients cut at the Bot API's 4096-character limit; Discord turns a long
   * paste into a `message.txt` attachment instead; Slack does not split). Absent: never split.
   */
  readonly clientSplitLength?: number;
}

/** Each platform's {@link PlatformAbilities}. */
export const PLATFORM_ABILITIES: Readonly<Record<Platform, PlatformAbilities>> = {
  telegram: { bareCommands: false, senderIsOwner: false, toolApprovals: true, clientSplitLength: 4096 },
  slack: { bareCommands: true, senderIsOwner: false, toolApprovals: true },
  discord: { bareCommands: true, senderIsOwner: false, toolApprovals: true },
  terminal: { bareCommands: false, senderIsOwner: true, toolApprovals: false },
};

/** One message from a person, with the bot mention already stripped. */
export interface InboundMessage {
  platform: Platform;
  /** The platform's dedupe key: Telegram `bot id:update_id`, Slack `channel:ts` (the message, whatever event carried it), Discord message id. */
  dedupeKey: string;
  chatId: string;
  /** A one-to-one conversation with the bot (Telegram private chat, Slack IM, Discord DM). */
  isDirect: boolean;
  /** Forum topic (Telegram) or thread (`thread_ts` on Slack). */
  threadId?: string;
  /**
   * The message is at its channel's (or DM's) top level although {@link threadId} is set: that is
   * the thread its answers open under it (Slack's `ts`), not its conversation. See
   * {@link conversationOf}. @default false
   */
  topLevel?: boolean;
  messageId: string;
  senderId: string;
  senderName: string;
  senderIsBot: boolean;
  text: string;
  /**
   * The message names the bot (Telegram `@username`, a Slack `app_mention`, a Discord mention),
   * the mention already stripped from {@link text}. @default false
   */
  mentioned?: boolean;
  /** Id of the message this one replies to, if any. */
  replyToMessageId?: string;
  /**
   * Text of the replied-to message when this bot sent it (Telegram includes it in the update),
   * so a reply finds its run by the `[run …]` tag even before the send was recorded.
   */
  replyToBotText?: string;
  /**
   * Forwarded from someone else (Telegram `forward_origin`, Discord forward references): somebody
   * else's words, never a command of the sender's.
   */
  forwarded?: boolean;
  /** Files sent with the message; downloaded only for the owner's launches. */
  attachments?: IncomingAttachment[];
  /** A voice note or audio clip; downloaded and transcribed only for the owner. */
  voice?: IncomingVoice;
  /** What the owner said in {@link voice}, once transcribed: {@link text} is then this transcript. */
  voiceTranscript?: string;
  /**
   * Set when no person sent it: a schedule's firing hands its launch to the dispatcher as a
   * message, and its run's `started` message names the schedule with this tag (`⏰ NAME · s_…`).
   */
  scheduleTag?: string;
  /**
   * Dedupe keys of later messages joined into this one (a long paste the client split); they are
   * claimed and marked handled with it.
   */
  continuationKeys?: string[];
  receivedAt: Date;
}

/** One platform message to send; its text is already within {@link ChannelAdapter.maxMessageLength}. */
export interface OutboundMessage {
  chatId: string;
  threadId?: string;
  replyToMessageId?: string;
  text: string;
  /**
   * `markdown`: the adapter renders the text in its platform's format (Telegram HTML, Slack
   * mrkdwn, Discord Markdown); `plain`: shown exactly as written. @default `plain`
   */
  format?: 'plain' | 'markdown';
  /** Buttons under the message, in one row. @default none */
  buttons?: readonly ButtonJson[];
}

/** One file to send: a long answer's `result.md`, a run's `.patch`. */
export interface OutboundDocument {
  chatId: string;
  threadId?: string;
  replyToMessageId?: string;
  /** The name shown, e.g. `result.md`. */
  filename: string;
  /** The file's bytes. */
  content: Buffer;
  /** A short text shown with the file; within the platform's caption limit (≤ 1024 characters on Telegram). */
  caption?: string;
}

/** A new text for a message baton sent earlier (the live status of a run). */
export interface MessageEdit {
  chatId: string;
  threadId?: string;
  /** The platform's id of the message, as {@link ChannelAdapter.send} returned it. */
  messageId: string;
  /** The whole new text, within {@link ChannelAdapter.maxMessageLength}. */
  text: string;
  /** As {@link OutboundMessage.format}. @default `plain` */
  format?: 'plain' | 'markdown';
  /** Buttons to keep under the message (an edit without them removes Telegram's inline keyboard). @default none */
  buttons?: ButtonJson[];
}

/**
 * A press of one of baton's buttons, normalized: Telegram `callback_query`, Slack
 * `block_actions`, Discord button interaction. Deduplicated like a message, by `dedupeKey`.
 */
export interface InboundPress {
  platform: Platform;
  /** Telegram `botId:update_id`; Slack/Discord the interaction's id. */
  dedupeKey: string;
  chatId: string;
  threadId?: string;
  /** The platform id of the message the button is under. */
  messageId: string;
  senderId: string;
  isDirect: boolean;
  /** What the button asks for ({@link ButtonJson.action}) and its argument. */
  action: string;
  arg: string;
  receivedAt: Date;
  /**
   * Answers the press itself (Telegram `answerCallbackQuery`, a Slack/Discord ephemeral reply):
   * a short text only the presser sees. Called at most once.
   */
  answer(text: string): Promise<void>;
}

/** Called by an adapter for every normalized press; errors are the adapter's to log. */
export type PressHandler = (press: InboundPress) => Promise<void>;

/** One raw update held by the {@link InboundInbox}. */
export interface InboxUpdate {
  /** The key the normalized message will carry as {@link InboundMessage.dedupeKey}. */
  dedupeKey: string;
  receivedAt: Date;
  /** The platform's update as received (JSON). */
  payload: unknown;
}

/**
 * Where a polling channel stores raw updates before it confirms them to the platform, so an
 * update fetched by a process that dies is still handled after the restart. The
 * dispatcher claims and marks the same rows by dedupe key.
 */
export interface InboundInbox {
  /** Stores updates as received; already known keys are left alone. */
  recordInbox(platform: Platform, updates: readonly InboxUpdate[]): Promise<void>;
  /** Updates stored but not claimed by anyone, oldest first. */
  receivedInbound(platform: Platform): Promise<InboxUpdate[]>;
  /** Drops a stored update that will never be acted on (baton ignores that kind of update). */
  forgetInbound(platform: Platform, dedupeKey: string): Promise<void>;
  /**
   * Returns this process's claims on stored updates to `received`, except `inFlight` (being
   * handled now): a handling that failed on a database error is then handed out again.
   *
   * @returns how many were released.
   */
  releaseOwnClaims(platform: Platform, inFlight: readonly string[]): Promise<number>;
}

/**
 * Moves everything baton keeps about a conversation to the chat's new id (a Telegram group
 * upgraded to a supergroup): pending and later messages, the `/use` default, run origins.
 */
export interface ConversationMover {
  moveConversation(platform: Platform, fromChatId: string, toChatId: string): Promise<void>;
}

/**
 * A lease on a connection only one process of a fleet may hold (a bot token's long poll):
 * the adapter connects when it is taken and disconnects when it is lost.
 * Implemented by src/fleet/lease.ts `DatabaseLease`.
 */
export interface ConnectionLease {
  /** Starts trying; resolves after the first try. */
  start(callbacks: { onAcquired(): void | Promise<void>; onLost(reason: string): void | Promise<void> }): Promise<void>;
  /** Stops trying and gives a held lease back. */
  stop(): Promise<void>;
  /** `holding`, `standby` (with the holder's node name) or `unknown` (with why). */
  state(): { state: 'holding' } | { state: 'standby'; holder: string } | { state: 'unknown'; reason: string };
}

/** Called by an adapter for every normalized message; errors are the adapter's to log. */
export type InboundHandler = (message: InboundMessage) => Promise<void>;

/** A channel's connection state, for the banner and doctor. */
export type ChannelState =
  | { state: 'connected' }
  | { state: 'reconnecting'; reason: string }
  | { state: 'failed'; reason: string }
  /** Another node of the fleet holds this connection's lease; this one takes over if it dies. */
  | { state: 'standby'; reason: string }
  | { state: 'stopped' };

/** What every chat platform adapter provides. */
export interface ChannelAdapter {
  readonly platform: Platform;
  /** Longest text one message may carry, in UTF-16 code units (Telegram: 4096). */
  readonly maxMessageLength: number;
  /** Connects and begins delivering inbound messages to `handler`. Resolves once connected. */
  start(handler: InboundHandler): Promise<void>;
  /** Stops receiving; pending sends may still complete. */
  stop(): Promise<void>;
  /**
   * Sends one message.
   *
   * @returns the platform's id of the message sent.
   * @throws ChannelSendError classified by where it failed and whether a retry can help.
   */
  send(message: OutboundMessage): Promise<{ messageId: string }>;
  /**
   * Sends one file. An adapter without it gets the text instead (the outbox falls
   * back to the message's remaining parts).
   *
   * @returns the platform's id of the message that carries the file.
   * @throws ChannelSendError as {@link send}; `refused` / `malformed` when the platform will not
   *   take this file (too large, type refused), which the outbox does not retry.
   */
  sendDocument?(document: OutboundDocument): Promise<{ messageId: string }>;
  /**
   * Replaces the text of a message this bot sent (Telegram `editMessageText`, Slack
   * `chat.update`, Discord message edit). The platform saying the text is unchanged ("message is
   * not modified") is success. Absent where the channel cannot edit (the terminal of `baton ask`).
   *
   * @throws ChannelSendError classified as for {@link send}: `rate_limited` carries the platform's
   *   `retryAfterMs`; `refused` for a message that no longer exists or is not the bot's.
   */
  editMessage?(edit: MessageEdit): Promise<void>;
  status(): ChannelState;
}

/** Why a send failed: the platform refused it, the payload was malformed, a rate limit, or the network. */
export type SendFailureKind = 'refused' | 'malformed' | 'rate_limited' | 'network';

/** A failed send, classified so the outbox can decide to retry, reshape or dead-letter. */
export class ChannelSendError extends BatonError {
  readonly kind: SendFailureKind;
  /** How long the platform asked us to wait (ms), for `rate_limited`. */
  readonly retryAfterMs: number | undefined;
  /**
   * The chat id the conversation moved to, for a `refused` send to a chat that no longer exists
   * under its old id (a Telegram group upgraded to a supergroup: `parameters.migrate_to_chat_id`).
   */
  readonly movedToChatId: string | undefined;
  /**
   * A `refused` send to a thread or forum topic that takes no messages now (Telegram 400
   * `TOPIC_CLOSED`); the chat itself still does.
   */
  readonly threadClosed: boolean;

  constructor(
    kind: SendFailureKind,
    message: string,
    options: { cause?: unknown; retryAfterMs?: number; movedToChatId?: string; threadClosed?: boolean } = {},
  ) {
    super(kind === 'network' ? 'channel_network' : 'channel_refused', message, { cause: options.cause });
    this.kind = kind;
    this.retryAfterMs = options.retryAfterMs;
    this.movedToChatId = options.movedToChatId;
    this.threadClosed = options.threadClosed ?? false;
  }

  /** Whether sending the same payload again later can succeed. */
  get retryable(): boolean {
    return this.kind === 'network' || this.kind === 'rate_limited';
  }
}

/** One conversation: a chat, or a thread or forum topic in it (the key of `/use` defaults and held files). */
export interface ConversationRef {
  platform: Platform;
  chatId: string;
  /** Undefined at a chat's top level. */
  threadId: string | undefined;
}

/**
 * The conversation a message belongs to: its thread or topic when it is in one, else its chat's
 * top level, whichever thread its answers go to (a Slack top-level message's answers open a thread
 * under it, yet the next top-level message is the same conversation).
 */
export function conversationOf(
  message: Pick<InboundMessage, 'platform' | 'chatId' | 'threadId' | 'topLevel'>,
): ConversationRef {
  return {
    platform: message.platform,
    chatId: message.chatId,
    threadId: message.topLevel ? undefined : message.threadId,
  };
}
