/**
 * What the channel contract suite needs of one channel: a small driver that starts the real
 * adapter against its fake platform server (or the terminal's streams), injects inbound events,
 * observes what reached the platform and makes the platform fail a send. The suite
 * (./suite.ts) defines the cases; each `<channel>.contract.test.ts` implements this and calls it.
 */
import type {
  ChannelAdapter,
  InboundHandler,
  InboundInbox,
  Platform,
  PressHandler,
} from '../../../src/channels/types.js';
import type { DeliveryTargetJson } from '../../../src/store/schema.js';

/**
 * Who sends an injected event: the owner and a guest of `[channels.<platform>]`, a stranger (in
 * neither list), or the bot itself (its own message coming back).
 */
export type Sender = 'owner' | 'guest' | 'stranger' | 'self';

/**
 * What a channel has. A case whose capability is absent asserts the channel's documented
 * fallback instead, never nothing.
 */
export interface ChannelCapabilities {
  /** The platform shows the bot its own messages (else nothing the bot writes comes back as input). */
  ownMessages: boolean;
  /** Other people reach the bot: guests and strangers exist (else every sender is the owner). */
  otherPeople: boolean;
  /** The platform may deliver one event twice (else every event is new and acts). */
  redelivery: boolean;
  /** A send can fail at the platform (else a send always goes, on its first attempt). */
  sendFailures: boolean;
  /** Buttons under a message, pressed back (else the text alone; its commands stand in). */
  buttons: boolean;
  /** Files sent (else the outbox drops the file and the text still goes). */
  documents: boolean;
  /** Messages baton sent can be edited (else the live status gets no edits). */
  edits: boolean;
}

/** Every capability: a chat platform with people, buttons, files and edits. */
export const EVERY_CAPABILITY: ChannelCapabilities = {
  ownMessages: true,
  otherPeople: true,
  redelivery: true,
  sendFailures: true,
  buttons: true,
  documents: true,
  edits: true,
};

/** A file an injected event carries. */
export interface InjectedFile {
  name: string;
  bytes: Buffer;
}

/** An event the driver injected. */
export interface InjectedEvent {
  /** The platform's id of the message, as {@link SentRecord.replyTo} names it. */
  messageId: string;
  /** The platform delivers this same event once more (same update, envelope or message). */
  redeliver(): Promise<void>;
}

/** One message the platform received from baton. */
export interface SentRecord {
  /** The platform's id of the sent message. */
  messageId: string;
  /** The text as the platform shows it. */
  text: string;
  /** Id of the message it answers (a reply, or the thread it opens under), if any. */
  replyTo: string | undefined;
  /** Labels of the buttons under it, in order (empty without buttons). */
  buttons: string[];
}

/** A platform failure of the next send. */
export type SendFailure = 'transient' | 'permanent' | 'rate_limited';

/** The `Retry-After` every driver's `rate_limited` failure carries, in ms. */
export const RATE_LIMIT_RETRY_AFTER_MS = 42_000;

/** What the suite hands a driver to start its adapter with: the service's handlers. */
export interface DriverWiring {
  /** Receives every normalized message (the dispatcher behind it). */
  handler: InboundHandler;
  /** Receives every normalized press (the dispatcher behind it). */
  presses: PressHandler;
  /** The inbox a channel stores raw events in before it confirms them, as the service wires it. */
  inbox: InboundInbox;
}

/** One channel as the contract suite drives it. */
export interface ChannelDriver {
  readonly platform: Platform;
  readonly capabilities: ChannelCapabilities;
  /** `[channels.<platform>]` owner and guest ids; undefined for a channel without trust lists. */
  readonly trust: { owner: string; guest: string } | undefined;
  /** Starts the fake platform server. Called once, before {@link startAdapter}. */
  startPlatform(): Promise<void>;
  /** Builds and starts the real adapter against the fake; resolves once it is connected. */
  startAdapter(wiring: DriverWiring): Promise<ChannelAdapter>;
  /**
   * Injects a direct message from `from` with `text` (and a file), as the platform delivers it.
   * `self` writes in the owner's conversation.
   */
  inject(from: Sender, text: string, file?: InjectedFile): Promise<InjectedEvent>;
  /** The owner's direct conversation, where the suite sends from the outbox. */
  ownerTarget(): DeliveryTargetJson;
  /** Every message the platform received from baton, in order. */
  sent(): SentRecord[];
  /** Every file the platform received, in order. */
  documents(): { filename: string; content: Buffer }[];
  /** Every edit the platform accepted, in order. */
  edits(): { messageId: string; text: string }[];
  /**
   * `from` presses the button `label` under the sent message `messageId`.
   *
   * @returns the press, which the platform can deliver once more.
   */
  press(messageId: string, label: string, from: 'owner' | 'guest'): Promise<{ redeliver(): Promise<void> }>;
  /** The answers presses got (only the presser sees them), in order. */
  pressAnswers(): string[];
  /** The platform fails the next send to the owner's conversation as `failure` says. */
  failNextSend(failure: SendFailure): void;
  /** Stops the adapter and the fake. */
  stop(): Promise<void>;
}
