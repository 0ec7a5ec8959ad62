/**
 * What a command or a press acts with, in place of the Dispatcher itself: its deps, the config
 * as it stands now, a way to reply, the held and downloading files, and the launch.
 */
import type { InboundMessage } from '../channels/types.js';
import type { BatonConfig } from '../config/index.js';
import type { ButtonJson } from '../core/buttons.js';
import type { RunId } from '../core/ids.js';
import type { VendorName } from '../core/vendor-name.js';
import type { RunRow } from '../store/schema.js';
import type { LaunchOptions } from './command.js';
import { ANSWERED, type DispatcherDeps, type DispatchResult } from './deps.js';
import type { Downloads } from './inbound/downloads.js';
import type { HeldAttachments } from './inbound/held-attachments.js';
import type { VoiceNotes } from './inbound/voice-notes.js';

/** The context every command and press handler is given. */
export interface DispatchContext {
  readonly deps: DispatcherDeps;
  /** The config to act on: the live one when the service refreshes it, else the one given. Read it anew each time. */
  readonly config: BatonConfig;
  /** Replies to `message` in its conversation (through the outbox), with buttons when given. */
  reply(message: InboundMessage, body: string, buttons?: ButtonJson[]): Promise<void>;
  /** Files sent without a command, for the sender's next launch. */
  readonly held: HeldAttachments;
  /** Launches still downloading their files. */
  readonly downloads: Downloads;
  /** Voice notes' transcripts waiting for the owner's Run or Edit. */
  readonly voiceNotes: VoiceNotes;
  /**
   * Launches a run (see launch/launch.ts); a resume when `parent` is given.
   *
   * @throws BatonError for every refused launch; the store's errors.
   */
  launch(
    requested: VendorName | 'default',
    options: LaunchOptions,
    task: string,
    message: InboundMessage,
    parent?: RunRow,
  ): Promise<RunId>;
}

/**
 * Replies `text` (awaited first when it is still being worded) to `message`: the whole of a
 * command whose answer is one message.
 */
export async function answer(
  ctx: DispatchContext,
  message: InboundMessage,
  text: string | Promise<string>,
): Promise<DispatchResult> {
  await ctx.reply(message, await text);
  return ANSWERED;
}
