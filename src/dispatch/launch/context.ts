/** What a launch acts with: the Dispatcher's deps, live config, files and per-message state. */
import type { InboundMessage } from '../../channels/types.js';
import type { BatonConfig } from '../../config/index.js';
import type { DispatcherDeps } from '../deps.js';
import type { Downloads } from '../inbound/downloads.js';
import type { HeldAttachments } from '../inbound/held-attachments.js';
import type { LaunchSpans } from '../launch-spans.js';

/** The context of {@link launch} (launch.ts) and its local and remote paths. */
export interface LaunchContext {
  readonly deps: DispatcherDeps;
  /** The config to act on now (the live one); read it anew each time. */
  readonly config: BatonConfig;
  readonly held: HeldAttachments;
  readonly downloads: Downloads;
  /** Refuses the launch when the run store is over its quota or the disk too full. */
  storageGate(): Promise<void>;
  /** The launch spans of the inbound event being handled, if it is one. */
  spansOf(message: InboundMessage): LaunchSpans | undefined;
  /** The conversation default read while the event was claimed, if it was read then. */
  conversationDefaultOf(message: InboundMessage): Promise<string | undefined> | undefined;
  /** Starts queued runs whose slot is free; never throws. */
  startQueued(): Promise<void>;
}
