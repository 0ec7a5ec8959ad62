/**
 * Routes every normalized inbound message: trust, dedupe, commands, launch gates. It never sees a platform SDK type; every answer goes out through the outbox.
 */
import { rm } from 'node:fs/promises';
import { join, normalize } from 'node:path';
import {
  conversationOf,
  PLATFORM_ABILITIES,
  type IncomingAttachment,
  type InboundMessage,
  type InboundPress,
} from '../channels/types.js';
import { APPROVAL_ACTIONS, newApprovalToken, type ApprovalBroker } from '../harness/approvals.js';
import type { BatonConfig } from '../config/index.js';
import type { Clock } from '../core/clock.js';
import { BatonError, isBatonError, type ErrorCode } from '../core/errors.js';
import { findRunIdTag, isRunId, newRunId, type RunId } from '../core/ids.js';
import { safeErrorMessage, type Logger } from '../core/logger.js';
import type { Outbox } from '../delivery/outbox.js';
import { outcomeTarget, type InstalledVendor, type RunSupervisor } from '../harness/supervisor.js';
import { cachedStorageGate } from '../harness/storage.js';
import { LaunchSpans } from './launch-spans.js';
import type { DispatcherDeps, DispatchResult } from './deps.js';
import { ANSWERED } from './deps.js';
import { HeldAttachments, HOLD_ATTACHMENTS_MS } from './inbound/held-attachments.js';
import { Downloads } from './inbound/downloads.js';
import { joinPastedText } from './inbound/pasted-text.js';
import { isInside, resolveWorkspace } from '../harness/workspace.js';
import type { RunStore } from '../store/runs-repo.js';
import type { PressClaims } from '../store/press-claims.js';
import type { PressSettler } from '../delivery/settle-press.js';
import type { NodeView } from '../fleet/nodes.js';
import { routeLaunch, type Route } from '../fleet/route.js';
import type { ButtonJson } from '../core/buttons.js';
import type { QueuedLaunchJson, RunOptionsJson, RunRow } from '../store/schema.js';
import type { VendorName } from '../core/vendor-name.js';
import { VENDOR_FACTS, type LaunchRequest } from '../harness/vendors/types.js';
import {
  APPROVE_CODEX,
  CODEX_BUDGET_REFUSAL,
  CODEX_TURNS_REFUSAL,
  HELP_TEXT,
  MAX_TIMEOUT_MINUTES,
  parseCommand,
  parseReplyOptions,
  type Command,
  type LaunchOptions,
} from './command.js';
import { AttachmentDownloadError } from '../channels/download.js';
import { assertWorktreeThere, pressRestoreWorktree, refusalButtons, RESTORE_WORKTREE_ACTION } from './worktree-gone.js';
import { withDownloadDeadlines } from '../core/download-deadline.js';
import {
  decodeUtf8,
  describeAttachments,
  DOWNLOAD_RETRY,
  MAX_ATTACHMENTS,
  MAX_TEXT_ATTACHMENT_BYTES,
  storeAttachments,
  taskWithTextAttachments,
  withDownloadRetry,
  type StoredAttachment,
} from '../harness/attachments.js';
import { cancelledWhileQueuedText, queuedRunCancelledText, queuedText, startedText } from '../wording/runs.js';
import { sessionUsageOf } from '../queue/session-usage.js';
import { QueueRunner } from '../queue/queue-runner.js';
import { discardWorktree, worktreeFor } from '../queue/run-worktree.js';
import { workspaceSettingsOf } from '../queue/workspace-settings.js';
import { vendorMissingText, withoutRestart, withRestartHow } from './refusal-text.js';
export { VENDOR_INSTALL, vendorMissingText, withoutRestart, withRestartHow } from './refusal-text.js';
import { parseSerialId, quotedId } from './serial-id.js';
import { formatRun, formatRunList, redeliverButtons } from './run-views.js';
import { GUEST_REFUSAL, mayPerform, roleOf, type Action, type Role } from './trust.js';
import { assertPosture } from './postures.js';
import { assertRowOptions, assertSpawnable, type SpawnGateContext } from './spawn-gates.js';
import { runTag } from '../wording/run-tag.js';
import { wordLaunchRefusal } from '../wording/launch-refusals.js';

export { HOLD_ATTACHMENTS_MS } from './inbound/held-attachments.js';

/** The answer to a message holding U+0000, which PostgreSQL cannot store in text. */
export const UNSTORABLE_TEXT =
  'Your message contains a NUL character (U+0000), which baton cannot store. Remove it and send the message again.';

/** The answer to a command that was forwarded from someone else. */
export const FORWARDED_REFUSAL =
  'That is a forwarded message: somebody else’s words are never run as your command. To run it, send the command yourself.';

export type { DispatcherDeps, DispatchResult } from './deps.js';

/** A press's answer, and whether it decided something (its message's buttons then give way). */
interface PressOutcome {
  text: string;
  done: boolean;
}

/** The refusal of a resume while a run still works in the session. */
function sessionBusy(busy: RunRow, then: string): string {
  return `${runTag(busy.id)} is still ${busy.status === 'queued' ? 'queued' : 'active'} in this session. Wait for its outcome, or /cancel ${busy.id}, then ${then}.`;
}
/** How long a passed storage check stands before the store is measured again, in ms. */
const STORAGE_RECHECK_MS = 60_000;
const UNKNOWN_COMMAND = 'Unknown command. Send /help for the commands.';

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

  /** The config to act on: the live one when the service refreshes it, else the one given. */
  private get config(): BatonConfig {
    return this.deps.liveConfig?.current ?? this.deps.config;
  }

  constructor(private readonly deps: DispatcherDeps) {
    const { harness } = this.config;
    this.held = new HeldAttachments(deps.clock);
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
    let command: Command | BatonError;
    try {
      command = parseCommand(message.text, PLATFORM_ABILITIES[platform].bareCommands);
    } catch (err) {
      if (!isBatonError(err)) throw err;
      command = err;
    }
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
    const result = await this.act(message, role, action, command);
    if (result.kind !== 'launched' && result.kind !== 'duplicate')
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
      await press.answer('Only the owner can use these buttons.');
      return { kind: 'refused', code: 'not_authorized' };
    }
    if (!(await deps.store.inbox.recordInbound(platform, dedupeKey, press.receivedAt, deps.supervisor.supervisorId))) {
      deps.logger.info({ platform, dedupeKey }, 'duplicate button press ignored');
      return { kind: 'duplicate' };
    }
    await press.answer(await this.pressOnce(press));
    await deps.store.inbox.markInboundHandled(platform, dedupeKey);
    return ANSWERED;
  }

  /**
   * A press acted on once per message where the action must not repeat (Resume: a double tap
   * would start two resumes of one parent; +30 min would extend twice; Stop would be answered
   * twice): the first press claims the message in the database, so a second press of any button
   * of that message, a replayed callback or another process acts never; a refused one gives the
   * claim back. A press that decided something then has its message's buttons replaced by the
   * decision.
   */
  private async pressOnce(press: InboundPress): Promise<string> {
    const { deps } = this;
    const message = { platform: press.platform, chatId: press.chatId, messageId: press.messageId };
    const claims = ONCE_PER_MESSAGE.has(press.action) ? deps.pressClaims : undefined;
    if (claims) {
      const earlier = await claims.claim(
        message,
        { action: press.action, arg: press.arg, pressedBy: `${press.platform}:${press.senderId}` },
        deps.clock.now(),
      );
      if (earlier)
        return earlier.answer
          ? `Already pressed: ${earlier.answer}`
          : 'Already pressed; the first press is being acted on.';
    }
    let outcome: string | PressOutcome;
    try {
      outcome = await this.actOnPress(press);
    } catch (err) {
      await claims?.release(message);
      throw err;
    }
    const { text, done } = typeof outcome === 'string' ? { text: outcome, done: false } : outcome;
    if (claims) await (done ? claims.answered(message, text) : claims.release(message));
    if (done) await deps.pressSettler?.settle({ ...message, threadId: press.threadId }, `✓ ${text}`);
    return text;
  }

  /** What a press does; @returns the short answer the presser sees, `done` when it decided something. */
  private async actOnPress(press: InboundPress): Promise<string | PressOutcome> {
    const { deps } = this;
    const inConversation = (run: RunRow): boolean =>
      run.origin.platform === press.platform && run.origin.chatId === press.chatId;
    switch (press.action) {
      case APPROVAL_ACTIONS.allow:
      case APPROVAL_ACTIONS.allow_run:
      case APPROVAL_ACTIONS.deny: {
        const approvalId = parseSerialId(press.arg);
        const approval =
          deps.approvals && approvalId !== undefined ? await deps.approvals.approval(approvalId) : undefined;
        const run = approval ? await deps.store.runs.getRun(approval.runId) : undefined;
        if (!approval || !run || !inConversation(run)) return 'That approval is not known here.';
        // Decided now, already, or its run ended: the card's buttons do nothing more either way.
        return {
          text: await deps.approvals!.press(approval.id, press.action, `${press.platform}:${press.senderId}`),
          done: true,
        };
      }
      case 'redeliver':
        return this.redeliver(press.arg);
      case 'keep':
        return { text: 'The run continues.', done: true };
      case 'extend': {
        const run = isRunId(press.arg) ? await deps.store.runs.getRun(press.arg) : undefined;
        if (!run || !inConversation(run)) return 'That run is not known here.';
        // A finished run's advisory has nothing left to decide: its buttons give way.
        if (run.status !== 'starting' && run.status !== 'running')
          return { text: 'That run has already finished.', done: true };
        const extended = deps.supervisor.extend(run.id as RunId, EXTEND_MS);
        if (extended === false) return 'That run is supervised by another baton process; /cancel it there.';
        if (extended === 'capped') return `The run already has the longest wall clock, ${MAX_TIMEOUT_MINUTES} minutes.`;
        const minutes = Math.round(extended / 60_000);
        await deps.store.runs.setTimeoutMinutes(run.id, minutes);
        return { text: `Wall clock now ${minutes} minutes (at most ${MAX_TIMEOUT_MINUTES}).`, done: true };
      }
      case 'resume': {
        const run = isRunId(press.arg) ? await deps.store.runs.getRun(press.arg) : undefined;
        if (!run || !inConversation(run)) return 'That run is not known here.';
        if (!this.config.harness.enabled) return 'Coding agents are disabled on this machine.';
        const busy = await this.activeRunOfSession(run);
        if (busy) return sessionBusy(busy, 'press Resume again');
        const message: InboundMessage = {
          platform: press.platform,
          dedupeKey: press.dedupeKey,
          chatId: press.chatId,
          isDirect: press.isDirect,
          ...(press.threadId ? { threadId: press.threadId } : {}),
          messageId: press.messageId,
          senderId: press.senderId,
          senderName: '',
          senderIsBot: false,
          text: RESUME_TASK,
          receivedAt: press.receivedAt,
        };
        try {
          const runId = await this.launch(run.vendor, { progress: false }, RESUME_TASK, message, run);
          return { text: `Resuming as ${runId}.`, done: true };
        } catch (err) {
          if (!isBatonError(err)) throw err;
          const buttons = refusalButtons(err);
          // Too long for a press answer, and it carries a button of its own.
          if (buttons) await this.reply(message, err.message, buttons);
          return err.message.slice(0, 190);
        }
      }
      case RESTORE_WORKTREE_ACTION: {
        const run = isRunId(press.arg) ? await deps.store.runs.getRun(press.arg) : undefined;
        if (!run || !inConversation(run)) return 'That run is not known here.';
        // Its worktree is on the disk of the node it ran on.
        if (run.node && deps.fleet && run.node !== deps.fleet.name)
          return `That run's worktree is on node ${run.node}; run baton worktrees restore ${run.id} there.`;
        const answer = (await pressRestoreWorktree(run)).text;
        if (answer.length > 190) {
          // Too long for a press answer (a lock and how to lift it): said in the chat as well.
          const target = {
            platform: press.platform,
            chatId: press.chatId,
            ...(press.threadId ? { threadId: press.threadId } : {}),
            replyToMessageId: press.messageId,
          };
          await deps.outbox.send({ runId: null, kind: 'reply', target, body: answer });
        }
        return answer.slice(0, 190);
      }
      case 'stop': {
        const run = isRunId(press.arg) ? await deps.store.runs.getRun(press.arg) : undefined;
        if (!run || !inConversation(run)) return 'That run is not known here.';
        if (run.status !== 'starting' && run.status !== 'running')
          return { text: 'That run has already finished.', done: true };
        switch (await this.cancelRun(run.id as RunId, 'owner_cancel')) {
          case 'cancelled':
            return { text: 'Stopped.', done: true };
          case 'requested':
            return { text: 'Stop requested; the outcome follows.', done: true };
          case 'finished':
            return { text: 'That run has already finished.', done: true };
          case 'unrecorded':
            return { text: 'Its processes are stopped; the database has not taken it yet.', done: true };
        }
        break;
      }
    }
    return 'This button no longer does anything.';
  }

  private async act(
    message: InboundMessage,
    role: Role,
    action: Action,
    command: Command | BatonError,
  ): Promise<DispatchResult> {
    const { deps } = this;
    if (!mayPerform(role, action, message.isDirect)) {
      await this.reply(message, GUEST_REFUSAL);
      return { kind: 'refused', code: 'not_authorized' };
    }
    if (message.text.includes('\u0000')) {
      await this.reply(message, UNSTORABLE_TEXT);
      return { kind: 'refused', code: 'text_unstorable' };
    }
    if (message.attachments?.length && message.text.trim() === '' && !message.replyToMessageId) {
      // Only the owner launches, so only the owner's files are held for a launch.
      if (role !== 'owner') {
        await this.reply(message, GUEST_REFUSAL);
        return { kind: 'refused', code: 'not_authorized' };
      }
      this.held.hold(message, message.attachments);
      await this.reply(
        message,
        `Got it — ${message.attachments.length === 1 ? 'it goes' : 'they go'} with your next /codex or /claude (within ${HOLD_ATTACHMENTS_MS / 60_000} minutes).`,
      );
      return { kind: 'answered' };
    }
    if (command instanceof BatonError) {
      await this.reply(message, command.message);
      return { kind: 'refused', code: command.code };
    }
    if (message.forwarded) {
      deps.logger.info({ platform: message.platform }, 'forwarded command refused');
      await this.reply(message, FORWARDED_REFUSAL);
      return { kind: 'refused', code: 'forwarded_message' };
    }
    try {
      return await this.execute(command, message, role);
    } catch (err) {
      if (!isBatonError(err)) throw err;
      if (err.code === 'duplicate_inbound') {
        deps.logger.info(
          { platform: message.platform, dedupeKey: message.dedupeKey },
          'inbound event already launched a run; ignored',
        );
        return { kind: 'duplicate' };
      }
      deps.logger.info({ code: err.code, platform: message.platform }, 'command refused');
      await this.reply(
        message,
        deps.configPerCommand
          ? withoutRestart(err.message)
          : deps.restartHow
            ? withRestartHow(err.message, deps.restartHow)
            : err.message,
        refusalButtons(err),
      );
      return { kind: 'refused', code: err.code };
    }
  }

  private roleOf(message: InboundMessage): Role {
    if (PLATFORM_ABILITIES[message.platform].senderIsOwner) return 'owner';
    return roleOf(this.config.channels[message.platform as keyof BatonConfig['channels']], message.senderId);
  }

  private async execute(command: Command, message: InboundMessage, role: Role): Promise<DispatchResult> {
    const { deps } = this;
    switch (command.kind) {
      case 'whoami':
        await this.reply(
          message,
          `Your ${message.platform} user id: ${message.senderId}\nThis chat: ${message.chatId}\nRole: ${role}`,
        );
        return ANSWERED;
      case 'help':
        await this.reply(
          message,
          this.config.harness.enabled ? HELP_TEXT : 'Coding agents are disabled on this machine.',
        );
        return ANSWERED;
      case 'launch':
        if (!this.config.harness.enabled) {
          await this.reply(message, UNKNOWN_COMMAND);
          return { kind: 'refused', code: 'harness_disabled' };
        }
        return { kind: 'launched', runId: await this.launch(command.vendor, command.options, command.task, message) };
      case 'runs': {
        if (command.runId) {
          await this.reply(message, await this.describeRun(command.runId));
          return ANSWERED;
        }
        const dead = await deps.store.outbox.deadLetters(5);
        const nodes = deps.nodes
          ? await deps.nodes().then((lines) => (lines.length > 1 ? `\n\nNodes:\n${lines.join('\n')}` : ''))
          : '';
        await this.reply(
          message,
          formatRunList(await deps.store.runs.recentRuns(10), await deps.store.outbox.counts(), dead) + nodes,
          redeliverButtons(dead),
        );
        return ANSWERED;
      }
      case 'redeliver':
        await this.reply(message, await this.redeliver(command.deliveryId));
        return ANSWERED;
      case 'cancel':
        await this.reply(message, await this.cancel(command.runId));
        return ANSWERED;
      case 'stop': {
        // Launches still downloading first: /stop overtook them, and they would start after it.
        const undownloaded = this.downloads.stop();
        // Queued runs first, so none of them takes a slot the stop frees.
        let dropped = 0;
        for (const run of await deps.store.queue.queuedRuns()) if (await this.cancelQueued(run, 'stop')) dropped += 1;
        const active = await deps.store.runs.activeRuns();
        let stopped = 0;
        const unrecorded: string[] = [];
        for (const run of active) {
          const result = await this.cancelRun(run.id as RunId, 'stop');
          if (result === 'cancelled' || result === 'requested') stopped += 1;
          if (result === 'unrecorded') unrecorded.push(run.id);
        }
        await this.reply(
          message,
          `Stopped ${stopped} active run${stopped === 1 ? '' : 's'}.` +
            (dropped > 0 ? ` Cancelled ${dropped} queued run${dropped === 1 ? '' : 's'}.` : '') +
            (undownloaded > 0
              ? ` Stopped ${undownloaded} launch${undownloaded === 1 ? '' : 'es'} still downloading ${undownloaded === 1 ? 'its' : 'their'} files.`
              : '') +
            (unrecorded.length > 0 ? ` ${unrecorded.map((id) => runTag(id)).join(', ')}: ${UNRECORDED}` : ''),
        );
        return ANSWERED;
      }
      case 'use':
        await this.reply(message, await this.use(command.target, message));
        return ANSWERED;
      case 'doctor':
        await this.reply(
          message,
          deps.doctor
            ? await deps.doctor()
            : 'The doctor is available from the running service; run `baton doctor` on the machine.',
        );
        return ANSWERED;
      case 'unknown':
        await this.reply(message, UNKNOWN_COMMAND);
        return ANSWERED;
      case 'text': {
        const resumed = await this.resumeByReply(message, command.text, role);
        if (resumed) return resumed;
        if (!message.isDirect) return { kind: 'ignored' };
        await this.reply(message, 'Send /help for the commands, or reply to a [run …] message to continue that run.');
        return ANSWERED;
      }
    }
  }

  /**
   * Launch gates in their fixed order (trust was checked by the caller), then the run row and
   * its `started` message in one transaction, then the background process. A resume keeps the
   * parent's vendor and cwd and repeats its model and sandbox, which codex does not remember.
   */
  private async launch(
    requested: VendorName | 'default',
    options: LaunchOptions,
    task: string,
    message: InboundMessage,
    parent?: RunRow,
  ): Promise<RunId> {
    const { deps } = this;
    const { harness } = this.config;
    if (!harness.approved) {
      throw new BatonError(
        'not_approved',
        'Coding agents are not yet approved on this machine. Approve with `baton approve` (or set [harness] approved = true), then send the command again.',
      );
    }
    const vendor = parent ? parent.vendor : requested === 'default' ? harness.defaultVendor : requested;
    const conversation = conversationOf(message);
    const spans = this.launchSpans.get(message);
    const conversationDefault = await (this.conversationDefaults.get(message) ??
      deps.store.conversations.conversationDefault(conversation));
    spans?.mark('conversation');
    const route = await this.routeOf(parent, options.in ?? conversationDefault ?? this.config.workspace.defaultCwd);
    spans?.mark('route');
    if (route.kind === 'remote') return this.launchRemote(route, vendor, options, task, message, parent);
    if (!deps.vendors.has(vendor)) {
      throw new BatonError('vendor_missing', vendorMissingText(vendor));
    }
    if (parent) await assertWorktreeThere(parent);
    const resolved = await resolveWorkspace(
      parent ? parent.cwd : route.target,
      conversationDefault,
      this.workspaceSettings(),
    );
    spans?.mark('workspace');
    const model = options.model ?? parent?.options.model;
    let posture = options.posture ?? parent?.options.sandbox;
    if (posture !== undefined) assertPosture(vendor, posture);
    // Tool approvals: claude runs in a mode that asks, or with `approve`.
    const approve =
      VENDOR_FACTS[vendor].toolApprovals &&
      deps.approvals !== undefined &&
      PLATFORM_ABILITIES[message.platform].toolApprovals &&
      (options.approve === true ||
        parent?.options.approve === true ||
        (posture !== undefined && VENDOR_FACTS[vendor].askingPostures.includes(posture)));
    if (options.approve && !approve) {
      throw new BatonError(
        'approvals_unavailable',
        VENDOR_FACTS[vendor].toolApprovals
          ? 'Tool approvals are not available in this front end; launch without approve.'
          : APPROVE_CODEX,
      );
    }
    if (approve) posture ??= 'default';
    const approvalToken = approve ? newApprovalToken() : undefined;
    const caps = runCaps(vendor, options, harness, parent);
    if (parent && !parent.vendorSessionId) {
      throw new BatonError(
        'resume_refused',
        `${runTag(parent.id)} has no ${vendor} session to resume (it never reached the CLI). Start a new run instead.`,
      );
    }
    const sessionUsageBefore = parent ? await sessionUsageOf(deps.store, parent) : undefined;
    await this.storageGate();
    spans?.mark('storage');

    const runId = (deps.newRunId ?? newRunId)();
    // A worktree of its own; a resume runs in its parent's directory, which is its
    // parent's worktree when that had one.
    const worktree = parent
      ? undefined
      : await worktreeFor(this.config, deps.worktreesDir, resolved.cwd, runId, options.worktree);
    spans?.mark('worktree');
    const workspace = worktree ?? resolved;
    const branch = worktree?.branch ?? parent?.branch ?? null;
    const sourceRoot = worktree?.sourceRoot ?? parent?.sourceRoot ?? null;
    // Downloaded before the run exists, so a refused file refuses the launch (owner only: only a
    // launch downloads).
    const attachmentsDir = join(deps.runsDir, runId, 'attachments');
    const incoming = [...this.held.take(message), ...(message.attachments ?? [])];
    const attachments = incoming.length
      ? await this.download(incoming, attachmentsDir, message).catch(async (err: unknown) => {
          if (worktree) await discardWorktree(worktree, deps.logger);
          throw err;
        })
      : [];
    const now = deps.clock.now();
    const timeoutMinutes =
      options.timeoutMinutes ?? parent?.options.timeoutMinutes ?? Math.round(harness.defaultTimeoutMs / 60_000);
    const target = {
      platform: message.platform,
      chatId: message.chatId,
      ...(message.threadId ? { threadId: message.threadId } : {}),
    };
    const run = {
      id: runId,
      parentRunId: parent?.id ?? null,
      vendor,
      status: 'starting' as const,
      task,
      cwd: workspace.cwd,
      worktreeRoot: workspace.worktreeRoot,
      branch,
      sourceRoot,
      options: {
        timeoutMinutes,
        progress: options.progress,
        ...(model ? { model } : {}),
        ...(posture ? { sandbox: posture } : {}),
        ...(approve ? { approve: true } : {}),
        ...caps,
      },
      ...(approvalToken ? { approvalTokenSha256: approvalToken.sha256 } : {}),
      origin: {
        ...target,
        senderId: message.senderId,
        messageId: message.messageId,
        ...(deps.fleet ? { node: deps.fleet.name } : {}),
      },
      supervisor: deps.supervisor.supervisorId,
      ...(deps.fleet ? { node: deps.fleet.name, nodeInstance: deps.fleet.instance ?? null } : {}),
      createdAt: now,
    };
    const request: LaunchRequest = {
      prompt: taskWithTextAttachments(task, attachments),
      ...(attachments.some((a) => a.kind === 'image')
        ? { images: attachments.flatMap((a) => (a.kind === 'image' ? [{ path: a.path, mediaType: a.mediaType }] : [])) }
        : {}),
      ...(model ? { model } : {}),
      ...(posture ? { posture } : {}),
      ...(parent?.vendorSessionId ? { resumeSessionId: parent.vendorSessionId } : {}),
      ...(caps.budgetUsd !== undefined ? { maxBudgetUsd: caps.budgetUsd } : {}),
      ...(caps.maxTurns !== undefined ? { maxTurns: caps.maxTurns } : {}),
      ...(sessionUsageBefore ? { sessionUsageBefore } : {}),
    };
    const timeoutMs = timeoutMinutes * 60_000;
    const startedBody = startedText(
      run,
      parent?.id,
      { length: task.length, messages: 1 + (message.continuationKeys?.length ?? 0) },
      describeAttachments(attachments),
      branch ?? undefined,
    );
    const created = await deps.store.launches
      .createRun(
        run,
        (place) => ({
          runId,
          kind: 'started',
          target: { ...target, replyToMessageId: message.messageId },
          // A queued run is stopped with /cancel; Stop goes on a run that starts now.
          ...(place ? {} : { buttons: [{ label: 'Stop', action: 'stop', arg: runId }] }),
          body: place ? queuedText(startedBody, place) : startedBody,
        }),
        { node: harness.maxActive, fleet: this.config.node.fleetMaxActive },
        now,
        { platform: message.platform, dedupeKey: message.dedupeKey },
        // A run that asks for approvals is never queued: its approval token is kept only in memory.
        harness.queue && !approve
          ? {
              maxQueued: harness.maxQueued,
              launch: {
                ...request,
                images: request.images ? [...request.images] : undefined,
                timeoutMs,
              } as QueuedLaunchJson,
            }
          : undefined,
        // The worktree is this run's from here: its launch snapshot begins while the commit travels.
        () => deps.supervisor.beginLaunchSnapshot(runId, workspace.cwd),
      )
      .catch(async (err: unknown) => {
        // A snapshot begun in the transaction takes the run directory with it once its git ends.
        if (!(await deps.supervisor.dropLaunchSnapshot(runId)) && attachments.length > 0)
          await rm(join(deps.runsDir, runId), { recursive: true, force: true });
        if (worktree) await discardWorktree(worktree, deps.logger);
        throw wordLaunchRefusal(err);
      });
    spans?.mark('run_row');
    const { run: stored, ...started } = created;
    if (started.queued) {
      // A transaction run again may have begun the snapshot on its first try, then queued the run.
      deps.supervisor.discardLaunchSnapshot(runId);
      deps.logger.info(
        { runId, vendor, cwd: workspace.cwd, behind: started.queued.behind, ahead: started.queued.ahead },
        'run queued',
      );
      await deps.outbox.attempt(started);
      // The slot may have freed between the check and now (a run ended on another process).
      await this.startQueued();
      return runId;
    }
    deps.logger.info(
      { runId, vendor, cwd: workspace.cwd, parentRunId: parent?.id, ...(spans ? { spansMs: spans.toJSON() } : {}) },
      'run launched',
    );
    deps.supervisor.start(
      stored,
      approvalToken ? { ...request, approvalToken: approvalToken.token } : request,
      timeoutMs,
    );
    await deps.outbox.attempt(started);
    return runId;
  }

  /** A launch's files, downloaded into `dir` under the live config's limits (see {@link Downloads.download}). */
  private download(incoming: readonly IncomingAttachment[], dir: string, message: InboundMessage) {
    return this.downloads.download(incoming, dir, message, this.config.harness);
  }

  /**
   * Whether a launch of `message`'s conversation is downloading its files now: a `/stop` or
   * `/cancel` then overtakes it (see overtaking.ts) instead of waiting behind it.
   */
  downloadsPending(message: InboundMessage): boolean {
    return this.downloads.pending(message);
  }

  /**
   * Where a launch runs: a resume goes to its parent's node; anything else by
   * {@link routeLaunch}. Without a fleet (`baton ask`) everything runs here.
   *
   * @throws BatonError `node_unknown`, `node_unavailable`.
   */
  private async routeOf(parent: RunRow | undefined, target: string | undefined): Promise<Route> {
    const { fleet } = this.deps;
    // The live config: `[workspace] roots` granted or revoked since the start decide here too.
    const { config } = this;
    if (!fleet) return { kind: 'local', target };
    if (parent) {
      if (!parent.node || parent.node === fleet.name) return { kind: 'local', target: parent.cwd };
      return routeLaunch(`${parent.node}:${parent.cwd}`, {
        self: fleet.name,
        roots: config.workspace.roots,
        projects: config.projects,
        nodes: await fleet.list(),
      });
    }
    // Reading the nodes costs a query: only for a target that may be elsewhere. A path inside
    // this node's own roots runs here whatever the other nodes are (routeLaunch), e.g. the
    // conversation's or [workspace] default directory.
    const expanded = target === undefined ? undefined : (config.projects.get(target) ?? target);
    if (expanded === undefined || (!expanded.startsWith('/') && !/^[A-Za-z0-9][A-Za-z0-9_.-]*:/.test(expanded)))
      return { kind: 'local', target };
    if (expanded.startsWith('/') && config.workspace.roots.some((root) => isInside(normalize(expanded), root)))
      return { kind: 'local', target };
    return routeLaunch(target, {
      self: fleet.name,
      roots: config.workspace.roots,
      projects: config.projects,
      nodes: await fleet.list(),
    });
  }

  /**
   * A launch for another node: written `queued` for that node with what it
   * starts with; nothing here touches the disk the run will use. The owning node resolves the
   * directory against its own roots, makes the worktree and claims the run within its
   * `max_active` ({@link startQueued}), or ends it `failed` with the reason.
   *
   * Tool approvals and images are refused: an approval token lives only in the memory of the
   * process that spawns, and an image is a file on this node's disk. Text files travel inline in
   * the prompt.
   *
   * @throws BatonError `approvals_unavailable`, `attachment_refused`, `queue_full`, `duplicate_inbound`.
   */
  private async launchRemote(
    route: Extract<Route, { kind: 'remote' }>,
    vendor: VendorName,
    options: LaunchOptions,
    task: string,
    message: InboundMessage,
    parent?: RunRow,
  ): Promise<RunId> {
    const { deps } = this;
    const { harness } = this.config;
    const facts = VENDOR_FACTS[vendor];
    const approve =
      facts.toolApprovals &&
      (options.approve === true ||
        parent?.options.approve === true ||
        (options.posture !== undefined && facts.askingPostures.includes(options.posture)));
    if (approve || (options.approve && !facts.toolApprovals)) {
      throw new BatonError(
        'approvals_unavailable',
        !facts.toolApprovals
          ? APPROVE_CODEX
          : `Tool approvals are not available for runs on another node (${route.node}) yet. Launch without approve (or in another mode), or on this node.`,
      );
    }
    const model = options.model ?? parent?.options.model;
    const posture = options.posture ?? parent?.options.sandbox;
    if (posture !== undefined) assertPosture(vendor, posture);
    const caps = runCaps(vendor, options, harness, parent);
    if (parent && !parent.vendorSessionId) {
      throw new BatonError(
        'resume_refused',
        `${runTag(parent.id)} has no ${vendor} session to resume (it never reached the CLI). Start a new run instead.`,
      );
    }
    const sessionUsageBefore = parent ? await sessionUsageOf(deps.store, parent) : undefined;
    const runId = (deps.newRunId ?? newRunId)();
    const incoming = [...this.held.take(message), ...(message.attachments ?? [])];
    const scratch = join(deps.runsDir, runId);
    const attachments = incoming.length
      ? await this.download(incoming, join(scratch, 'attachments'), message).finally(() =>
          rm(scratch, { recursive: true, force: true }),
        )
      : [];
    if (attachments.some((a) => a.kind === 'image')) {
      throw new BatonError(
        'attachment_refused',
        `Images cannot go to a run on another node (${route.node}) yet: they are files on this node's disk. Send text files, or launch on this node.`,
      );
    }
    const now = deps.clock.now();
    const timeoutMinutes =
      options.timeoutMinutes ?? parent?.options.timeoutMinutes ?? Math.round(harness.defaultTimeoutMs / 60_000);
    const target = {
      platform: message.platform,
      chatId: message.chatId,
      ...(message.threadId ? { threadId: message.threadId } : {}),
    };
    const launch: QueuedLaunchJson = {
      prompt: taskWithTextAttachments(task, attachments),
      ...(model ? { model } : {}),
      ...(posture ? { posture } : {}),
      ...(parent?.vendorSessionId ? { resumeSessionId: parent.vendorSessionId } : {}),
      ...(caps.budgetUsd !== undefined ? { maxBudgetUsd: caps.budgetUsd } : {}),
      ...(caps.maxTurns !== undefined ? { maxTurns: caps.maxTurns } : {}),
      ...(sessionUsageBefore ? { sessionUsageBefore } : {}),
      timeoutMs: timeoutMinutes * 60_000,
      route: { target: route.path, worktree: !parent && options.worktree === true },
    };
    const run = {
      id: runId,
      parentRunId: parent?.id ?? null,
      vendor,
      status: 'queued' as const,
      task,
      cwd: route.path,
      // Until the owning node resolves it: unique to the target, never an active run's root.
      worktreeRoot: `${route.node}:${route.path}`,
      branch: parent?.branch ?? null,
      sourceRoot: parent?.sourceRoot ?? null,
      options: {
        timeoutMinutes,
        progress: options.progress,
        ...(model ? { model } : {}),
        ...(posture ? { sandbox: posture } : {}),
        ...caps,
      },
      origin: { ...target, senderId: message.senderId, messageId: message.messageId, node: deps.fleet!.name },
      supervisor: deps.supervisor.supervisorId,
      node: route.node,
      // Only that process of the node claims it: another that took the same name never does.
      nodeInstance: route.instance ?? null,
      launch,
      createdAt: now,
    };
    const startedBody = startedText(
      run,
      parent?.id,
      { length: task.length, messages: 1 + (message.continuationKeys?.length ?? 0) },
      describeAttachments(attachments),
    );
    const body =
      startedBody.replace('] started · ', `] sent to node ${route.node} · `) +
      `
Node ${route.node} starts it when it has a free slot; /cancel to drop it.`;
    const started = await deps.store.launches
      .createRoutedRun(
        run,
        { runId, kind: 'started', target: { ...target, replyToMessageId: message.messageId }, body },
        harness.maxQueued,
        now,
        { platform: message.platform, dedupeKey: message.dedupeKey },
      )
      .catch((err: unknown) => {
        throw wordLaunchRefusal(err);
      });
    deps.logger.info({ runId, vendor, node: route.node, cwd: route.path }, 'run routed to another node');
    await deps.outbox.attempt(started);
    return runId;
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
    return this.cancel(runId);
  }

  /**
   * A reply to one of our `[run …]` messages: resume that run's session with the reply as task.
   *
   * @returns undefined when the replied-to message is not a run message.
   */
  private async resumeByReply(message: InboundMessage, text: string, role: Role): Promise<DispatchResult | undefined> {
    if (!message.replyToMessageId) return undefined;
    const parent = await this.findRepliedRun(message);
    if (!parent) return undefined;
    if (!mayPerform(role, 'launch', message.isDirect)) {
      await this.reply(message, GUEST_REFUSAL);
      return { kind: 'refused', code: 'not_authorized' };
    }
    if (!this.config.harness.enabled) return { kind: 'ignored' };
    const busy = await this.activeRunOfSession(parent);
    if (busy) throw new BatonError('resume_refused', sessionBusy(busy, 'reply again'));
    // A reply may carry options as a command does (`tokens:8k continue`).
    const { options, task } = parseReplyOptions(text, parent.vendor);
    return { kind: 'launched', runId: await this.launch(parent.vendor, options, task, message, parent) };
  }

  /**
   * A run still working in `run`'s session: the run itself, a resume of it, or another run of the
   * same vendor session, queued, starting or running. Resuming then would run the session twice.
   */
  private async activeRunOfSession(run: RunRow): Promise<RunRow | undefined> {
    const live = [...(await this.deps.store.runs.activeRuns()), ...(await this.deps.store.queue.queuedRuns())];
    return live.find(
      (r) =>
        r.id === run.id ||
        r.parentRunId === run.id ||
        (run.vendorSessionId !== null && r.vendorSessionId === run.vendorSessionId),
    );
  }

  /**
   * The run a reply refers to: by the recorded id of the message replied to, else by the
   * `[run …]` tag in that message when the bot sent it, else the newest run of the thread.
   */
  private async findRepliedRun(message: InboundMessage): Promise<RunRow | undefined> {
    const byId = await this.deps.store.runs.findRunByMessage(
      message.platform,
      message.chatId,
      message.replyToMessageId!,
    );
    if (byId) return byId;
    const tag = message.replyToBotText ? findRunIdTag(message.replyToBotText) : undefined;
    if (tag) {
      const run = await this.deps.store.runs.getRun(tag);
      // Only a run that belongs to this conversation: a tag quoted from elsewhere is not a handle.
      if (run && run.origin.platform === message.platform && run.origin.chatId === message.chatId) return run;
    }
    // A reply in a thread (Slack: replyToMessageId is the thread root) continues the newest run
    // started in that thread.
    if (message.threadId !== undefined && message.replyToMessageId === message.threadId) {
      return this.deps.store.runs.latestRunInThread(message.platform, message.chatId, message.threadId);
    }
    return undefined;
  }

  /** `/redeliver ID` and the Redeliver button: a dead letter goes back to the queue once. */
  private async redeliver(id: string): Promise<string> {
    const deliveryId = parseSerialId(id);
    const row =
      deliveryId !== undefined ? await this.deps.store.outbox.redeliver(deliveryId, this.deps.clock.now()) : undefined;
    if (!row) return `#${quotedId(id)} is not a dead letter (see /runs for the list).`;
    this.deps.logger.info({ deliveryId: row.id, runId: row.runId }, 'dead letter redelivered by the owner');
    const sent = await this.deps.outbox.attempt(row);
    return sent
      ? `#${row.id} sent again.`
      : `#${row.id} is queued again; the platform refused it for now, and baton keeps retrying.`;
  }

  private async use(target: string, message: InboundMessage): Promise<string> {
    // A directory of another node is kept as `node:path`; that node checks it
    // at each launch.
    const route = await this.routeOf(undefined, target);
    if (route.kind === 'remote') {
      const remote = `${route.node}:${route.path}`;
      await this.deps.store.conversations.setConversationDefault(
        conversationOf(message),
        remote,
        this.deps.clock.now(),
      );
      return `Runs in this conversation now default to ${remote} (on node ${route.node}, which checks the directory at each launch).`;
    }
    const workspace = await resolveWorkspace(route.target, undefined, this.workspaceSettings());
    await this.deps.store.conversations.setConversationDefault(
      conversationOf(message),
      workspace.cwd,
      this.deps.clock.now(),
    );
    return `Runs in this conversation now default to ${workspace.cwd}.`;
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

  private workspaceSettings() {
    return workspaceSettingsOf(this.config, this.deps);
  }

  private async describeRun(id: string): Promise<string> {
    const run = isRunId(id) ? await this.deps.store.runs.getRun(id) : undefined;
    if (!run) return 'No coding run found for that id.';
    return formatRun(
      run,
      await this.deps.store.outbox.deliveriesOfRun(run.id as RunId),
      (await this.deps.approvals?.ofRun(run.id)) ?? [],
    );
  }

  private async cancel(id: string): Promise<string> {
    const run = isRunId(id) ? await this.deps.store.runs.getRun(id) : undefined;
    if (!run) return 'No coding run found for that id.';
    if (run.status === 'queued')
      return (await this.cancelQueued(run, 'owner_cancel'))
        ? queuedRunCancelledText(run.id)
        : 'That coding run has already started or finished; /cancel it again if it is active.';
    if (run.status !== 'starting' && run.status !== 'running') return 'That coding run has already finished.';
    switch (await this.cancelRun(run.id as RunId, 'owner_cancel')) {
      case 'cancelled':
        return `${runTag(run.id)} cancelled.`;
      case 'requested':
        return `${runTag(run.id)} cancel requested from the baton process running it; its outcome follows.`;
      case 'finished':
        return 'That coding run has already finished.';
      case 'unrecorded':
        return `${runTag(run.id)} ${UNRECORDED}`;
    }
  }

  /** Cancels a queued run with its outcome message; false when it was no longer queued. */
  private async cancelQueued(run: RunRow, reason: 'owner_cancel' | 'stop'): Promise<boolean> {
    const { deps } = this;
    const body = cancelledWhileQueuedText(run, reason === 'stop' ? '/stop' : undefined);
    const outcome = await deps.store.queue.cancelQueued(
      run.id,
      reason,
      { runId: run.id as RunId, kind: 'outcome', target: outcomeTarget(run), body },
      deps.clock.now(),
    );
    if (outcome) await deps.outbox.attempt(outcome);
    return outcome !== null;
  }

  /**
   * Cancels a run here when this process supervises it (waiting until none of its processes is
   * left), else asks its supervising process through the database.
   *
   * @returns `finished` when the run was no longer active (or ended another way before the cancel
   *   landed: its outcome says how); `unrecorded` when its processes are stopped but the database
   *   has not taken its end yet — never claimed as cancelled.
   */
  private async cancelRun(
    runId: RunId,
    reason: 'owner_cancel' | 'stop',
  ): Promise<'cancelled' | 'requested' | 'finished' | 'unrecorded'> {
    const here = await this.deps.supervisor.cancel(runId, reason);
    if (here) return here.kind === 'cancelled' ? 'cancelled' : here.kind === 'ended' ? 'finished' : 'unrecorded';
    return (await this.deps.store.runs.requestCancel(runId, reason)) ? 'requested' : 'finished';
  }

  private async reply(message: InboundMessage, body: string, buttons?: ButtonJson[]): Promise<void> {
    await this.deps.outbox.send({
      ...(buttons?.length ? { buttons } : {}),
      runId: null,
      kind: 'reply',
      target: {
        platform: message.platform,
        chatId: message.chatId,
        ...(message.threadId ? { threadId: message.threadId } : {}),
        replyToMessageId: message.messageId,
      },
      body,
    });
  }
}

/**
 * Button actions acted on at most once per message: the first press of any button under the
 * message claims it (Resume, and the watchdog advisory's Keep waiting / +30 min / Stop and the
 * Stop under `started`).
 */
const ONCE_PER_MESSAGE: ReadonlySet<string> = new Set(['resume', 'keep', 'extend', 'stop']);

/** What the "+30 min" button adds to a run's wall clock, in ms. */
const EXTEND_MS = 30 * 60_000;
/** The task of a run the Resume button starts. */
export const RESUME_TASK = 'Continue where you left off.';

/** The answer for a cancel whose run end has not reached the database yet. */
const UNRECORDED =
  'its processes are stopped, but the database is not answering, so the cancel is not recorded yet. baton keeps retrying; the outcome follows once it is written.';

function actionOf(command: Command): Action {
  switch (command.kind) {
    case 'launch':
    case 'cancel':
    case 'stop':
    case 'redeliver':
    case 'use':
    case 'doctor':
      return 'launch';
    case 'runs':
    case 'help':
    case 'unknown':
      return 'read';
    case 'whoami':
      return 'whoami';
    case 'text':
      return 'read';
  }
}

/**
 * The spending caps of a run: the launch's own options, else the parent's on a
 * resume, else the `[harness]` defaults. Dollar and turn caps exist only for claude (its
 * `--max-budget-usd` / `--max-turns`); their defaults do not apply to codex, and asking for them
 * on a codex run (`/run` with codex the default vendor) is refused. The token cap applies to both.
 *
 * @throws BatonError `usage` for `budget:` or `turns:` on a codex run.
 */
function runCaps(
  vendor: VendorName,
  options: LaunchOptions,
  harness: BatonConfig['harness'],
  parent: RunRow | undefined,
): Pick<RunOptionsJson, 'budgetUsd' | 'maxTurns' | 'maxTokens'> {
  const facts = VENDOR_FACTS[vendor];
  if (!facts.budgetCap && options.budgetUsd !== undefined) throw new BatonError('usage', CODEX_BUDGET_REFUSAL);
  if (!facts.turnCap && options.maxTurns !== undefined) throw new BatonError('usage', CODEX_TURNS_REFUSAL);
  const budgetUsd = facts.budgetCap
    ? (options.budgetUsd ?? parent?.options.budgetUsd ?? harness.defaultBudgetUsd)
    : undefined;
  const maxTurns = facts.turnCap
    ? (options.maxTurns ?? parent?.options.maxTurns ?? harness.defaultMaxTurns)
    : undefined;
  const maxTokens = options.maxTokens ?? parent?.options.maxTokens ?? harness.defaultMaxTokens;
  return {
    ...(budgetUsd !== undefined ? { budgetUsd } : {}),
    ...(maxTurns !== undefined ? { maxTurns } : {}),
    ...(maxTokens !== undefined ? { maxTokens } : {}),
  };
}
