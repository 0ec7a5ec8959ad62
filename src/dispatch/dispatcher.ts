/**
 * Routes every normalized inbound message: trust, dedupe, commands, launch gates. It never sees a platform SDK type; every answer goes out through the outbox.
 *
 * This file holds the inbox protocol around a message and a press; what a command does is in
 * commands/, what a button does in presses/, the launch in launch/, held and downloaded files in
 * inbound/.
 */
import { OWNER_ONLY_BUTTONS } from '../wording/presses.js';
import { conversationOf, PLATFORM_ABILITIES, type InboundMessage, type InboundPress } from '../channels/types.js';
import type { BatonConfig } from '../config/index.js';
import { BatonError, isBatonError } from '../core/errors.js';
import type { RunId } from '../core/ids.js';
import { cachedStorageGate } from '../harness/storage.js';
import { QueueRunner } from '../queue/queue-runner.js';
import { parseCommand, type Command } from './command.js';
import { act } from './commands/act.js';
import { actionOf } from './commands/action.js';
import { cancel } from './commands/cancel.js';
import type { DispatchContext } from './context.js';
import { ANSWERED, type DispatcherDeps, type DispatchResult } from './deps.js';
import { Downloads } from './inbound/downloads.js';
import { HeldAttachments } from './inbound/held-attachments.js';
import { joinPastedText } from './inbound/pasted-text.js';
import { voiceNote } from './inbound/voice.js';
import { VoiceNotes } from './inbound/voice-notes.js';
import type { LaunchContext } from './launch/context.js';
import { launch } from './launch/launch.js';
import { LaunchSpans } from './launch-spans.js';
import { pressOnce } from './presses/press-once.js';
import { replyTo } from './reply.js';
import { assertRowOptions, assertSpawnable, type SpawnGateContext } from './spawn-gates.js';
import { mayPerform, roleOf, type Action, type Role } from './trust.js';
import { redeliver } from './commands/redeliver.js';

export type { DispatcherDeps, DispatchResult } from './deps.js';
export { HOLD_ATTACHMENTS_MS } from './inbound/held-attachments.js';
export { RESUME_TASK } from './presses/resume.js';
export { VENDOR_INSTALL, vendorMissingText, withoutRestart, withRestartHow } from './refusal-text.js';
export { FORWARDED_REFUSAL, UNSTORABLE_TEXT } from '../wording/dispatch.js';

/** How long a passed storage check stands before the store is measured again, in ms. */
const STORAGE_RECHECK_MS = 60_000;

/** The command router. */
export class Dispatcher {
  private readonly storageGate: () => Promise<void>;
  /** The launch spans of the inbound events being handled (see launch-spans.ts). */
  private readonly launchSpans = new WeakMap<InboundMessage, LaunchSpans>();
  /** The conversation defaults read for the launches being handled, started with their claim. */
  private readonly conversationDefaults = new WeakMap<InboundMessage, Promise<string | undefined>>();
  /** Files sent without a command, for the sender's next launch. */
  private readonly held: HeldAttachments;
  /** Launches still downloading their files; `/stop` (which overtakes them) ends these too. */
  private readonly downloads = new Downloads();
  /** Voice notes' transcripts waiting for Run or Edit. */
  private readonly voiceNotes: VoiceNotes;
  /** What the commands and presses act with (see context.ts). */
  private readonly context: DispatchContext;

  /** The config to act on: the live one when the service refreshes it, else the one given. */
  private get config(): BatonConfig {
    return this.deps.liveConfig?.current ?? this.deps.config;
  }

  constructor(private readonly deps: DispatcherDeps) {
    const { harness } = this.config;
    this.held = new HeldAttachments(deps.clock);
    this.voiceNotes = new VoiceNotes(deps.clock);
    this.storageGate = cachedStorageGate(
      deps.runsDir,
      { artifactQuotaBytes: harness.artifactQuotaBytes, minFreeBytes: harness.minFreeBytes },
      STORAGE_RECHECK_MS,
      () => deps.clock.nowMs(),
    );
    this.queue = new QueueRunner({
      ...deps,
      config: () => this.config,
      refreshConfig: deps.liveConfig ? () => deps.liveConfig!.refresh() : undefined,
      gates: {
        assertRowOptions: (run) => assertRowOptions(run, this.spawnGateContext()),
        assertSpawnable: (run) => assertSpawnable(run, this.spawnGateContext()),
      },
    });
    this.context = this.dispatchContext();
  }

  /** Starts queued runs whose slot is free. */
  private readonly queue: QueueRunner;

  /**
   * Handles one inbound message. Throws only on infrastructure failure (database down); every
   * user-facing refusal becomes a reply.
   *
   * Inbox: the event is claimed under this process's id before anything
   * is acted on, and marked handled once answered (a launch marks it in the run's own
   * transaction). A process that dies in between leaves the claim, which the next start releases
   * so the event is handled then; the dedupe key still allows one run at most.
   */
  async handle(message: InboundMessage): Promise<DispatchResult> {
    const { deps } = this;
    const { platform, dedupeKey } = message;
    const spans = new LaunchSpans(message.receivedAt);
    // config.toml is re-read while the event is claimed: what comes before the claim
    // reads no live key (only consent and roots apply live), and nothing acts before both are done.
    // refresh() never rejects.
    const refreshed = deps.liveConfig?.refresh();
    if (message.senderIsBot) {
      await refreshed;
      await deps.store.inbox.forgetInbound(platform, dedupeKey);
      return { kind: 'ignored' };
    }
    const role = this.roleOf(message);
    // Only the owner's files are ever downloaded.
    if (role === 'owner' && message.attachments?.some((a) => a.pastedText))
      message = await joinPastedText(message, deps.logger);
    this.launchSpans.set(message, spans);
    const command = this.parse(message);
    const action: Action = command instanceof BatonError ? 'launch' : actionOf(command);
    // Authorization comes before anything is written: a stranger leaves no trace (the inbox
    // forgets the raw update it stored).
    if (role === 'stranger' && !mayPerform(role, action, message.isDirect)) {
      await refreshed;
      await deps.store.inbox.forgetInbound(platform, dedupeKey);
      return { kind: 'ignored' };
    }
    // A launch's conversation default is read while the event is claimed: one
    // conversation's events are handled in order, so no /use of it can come in between.
    if (!(command instanceof BatonError) && command.kind === 'launch' && role !== 'stranger') {
      const read = deps.store.conversations.conversationDefault(conversationOf(message));
      read.catch(() => undefined); // awaited (and its error thrown) by the launch, if one comes
      this.conversationDefaults.set(message, read);
    }
    const claimed = await deps.store.inbox.recordInbound(
      platform,
      dedupeKey,
      message.receivedAt,
      deps.supervisor.supervisorId,
    );
    await refreshed;
    if (!claimed) {
      deps.logger.info({ platform, dedupeKey }, 'duplicate inbound event ignored');
      return { kind: 'duplicate' };
    }
    spans.mark('inbound');
    // The later parts of a joined paste are claimed with it, so a replay never handles them alone.
    const continuations = message.continuationKeys ?? [];
    for (const key of continuations)
      await deps.store.inbox.recordInbound(platform, key, message.receivedAt, deps.supervisor.supervisorId);
    // A voice note's words are its text: they are read as a command or a message once heard.
    const result = message.voice
      ? await voiceNote(this.context, message, role)
      : await act(this.context, message, role, action, command);
    if (result.kind !== 'launched' && result.kind !== 'duplicate' && result.kind !== 'deferred')
      await deps.store.inbox.markInboundHandled(platform, dedupeKey);
    for (const key of continuations) await deps.store.inbox.markInboundHandled(platform, key);
    return result;
  }

  /**
   * Handles one press of a baton button: only the owner's press counts (anyone
   * else is answered "owner only" and nothing changes); the press is claimed by its dedupe key
   * first, like a message, so a replayed press acts once. Throws only on infrastructure failure.
   */
  async handlePress(press: InboundPress): Promise<DispatchResult> {
    const { deps } = this;
    const { platform, dedupeKey } = press;
    await deps.liveConfig?.refresh();
    const role = PLATFORM_ABILITIES[press.platform].senderIsOwner
      ? 'owner'
      : roleOf(this.config.channels[press.platform as keyof BatonConfig['channels']], press.senderId);
    if (role !== 'owner') {
      await deps.store.inbox.forgetInbound(platform, dedupeKey);
      await press.answer(OWNER_ONLY_BUTTONS);
      return { kind: 'refused', code: 'not_authorized' };
    }
    if (!(await deps.store.inbox.recordInbound(platform, dedupeKey, press.receivedAt, deps.supervisor.supervisorId))) {
      deps.logger.info({ platform, dedupeKey }, 'duplicate button press ignored');
      return { kind: 'duplicate' };
    }
    await press.answer(await pressOnce(this.context, press));
    await deps.store.inbox.markInboundHandled(platform, dedupeKey);
    return ANSWERED;
  }

  /**
   * Whether a launch of `message`'s conversation is downloading its files now: a `/stop` or
   * `/cancel` then overtakes it (see overtaking.ts) instead of waiting behind it.
   */
  downloadsPending(message: InboundMessage): boolean {
    return this.downloads.pending(message);
  }

  /**
   * Starts, in this process, every queued run whose slot is free (see {@link QueueRunner}). Never
   * throws: a failure is logged and the next call retries.
   */
  async startQueued(): Promise<void> {
    return this.queue.startQueued();
  }

  /**
   * Names a queued run this process will see through, so that {@link startQueued} may start it
   * under `queueScope: 'own'`; `false` takes it back (the process gives up waiting).
   */
  waitFor(runId: RunId, waits = true): void {
    this.queue.waitFor(runId, waits);
  }

  /**
   * `/cancel ID` for a front end's own run, queued or active, with its usual answer.
   *
   * @throws the store's errors.
   */
  async cancelOwn(runId: RunId): Promise<string> {
    this.queue.waitFor(runId, false);
    return cancel(this.deps, runId);
  }

  /**
   * `/redeliver ID` for the web console: the same rules and answer as the chat command.
   *
   * @throws the store's errors.
   */
  async redeliver(deliveryId: string): Promise<string> {
    return redeliver(this.deps, deliveryId);
  }

  /** The message's command, or the BatonError its parse threw (answered as a refusal). */
  private parse(message: InboundMessage): Command | BatonError {
    try {
      return parseCommand(message.text, PLATFORM_ABILITIES[message.platform].bareCommands);
    } catch (err) {
      if (!isBatonError(err)) throw err;
      return err;
    }
  }

  private roleOf(message: InboundMessage): Role {
    if (PLATFORM_ABILITIES[message.platform].senderIsOwner) return 'owner';
    return roleOf(this.config.channels[message.platform as keyof BatonConfig['channels']], message.senderId);
  }

  /** The context of the commands and presses: this dispatcher's deps and state, and the live config. */
  private dispatchContext(): DispatchContext {
    const dispatcher = this;
    const { deps, held, downloads, voiceNotes } = this;
    const launchContext: LaunchContext = {
      deps,
      get config() {
        return dispatcher.config;
      },
      held,
      downloads,
      storageGate: () => this.storageGate(),
      spansOf: (message) => this.launchSpans.get(message),
      conversationDefaultOf: (message) => this.conversationDefaults.get(message),
      startQueued: () => this.startQueued(),
    };
    return {
      deps,
      get config() {
        return dispatcher.config;
      },
      reply: (message, body, buttons) => replyTo(deps.outbox, message, body, buttons),
      held,
      downloads,
      voiceNotes,
      launch: (requested, options, task, message, parent) =>
        launch(launchContext, requested, options, task, message, parent),
    };
  }

  /** What the spawn-time gates read: the live config and this node's directories. */
  private spawnGateContext(): SpawnGateContext {
    const { deps } = this;
    return {
      config: this.config,
      vendors: deps.vendors,
      runsDir: deps.runsDir,
      protectedDirs: deps.protectedDirs ?? [],
      worktreesDir: deps.worktreesDir,
    };
  }
}
