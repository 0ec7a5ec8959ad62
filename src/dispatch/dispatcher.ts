/**
 * Routes every normalized inbound message: trust, dedupe, commands, launch gates (PRODUCT.md
 * §4–§6). It never sees a platform SDK type; every answer goes out through the outbox.
 */
import type { InboundMessage } from '../channels/types.js';
import type { BatonConfig } from '../config/index.js';
import type { Clock } from '../core/clock.js';
import { BatonError, isBatonError, type ErrorCode } from '../core/errors.js';
import { findRunIdTag, isRunId, newRunId, type RunId } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import type { Outbox } from '../delivery/outbox.js';
import type { InstalledVendor, RunSupervisor } from '../harness/supervisor.js';
import { cachedStorageGate } from '../harness/storage.js';
import { resolveWorkspace } from '../harness/workspace.js';
import type { RunStore } from '../store/runs-repo.js';
import type { RunRow, Vendor as VendorName } from '../store/schema.js';
import { HELP_TEXT, parseCommand, type Command, type LaunchOptions } from './command.js';
import { startedText } from './messages.js';
import { formatRun, formatRunList } from './run-views.js';
import { GUEST_REFUSAL, mayPerform, roleOf, type Action, type Role } from './trust.js';

/** Dependencies of the {@link Dispatcher}. */
export interface DispatcherDeps {
  config: BatonConfig;
  store: RunStore;
  outbox: Outbox;
  supervisor: RunSupervisor;
  clock: Clock;
  logger: Logger;
  /** Vendor CLIs found on PATH at start. */
  vendors: ReadonlyMap<VendorName, InstalledVendor>;
  homeDir: string;
  /** `$BATON_HOME/harness/runs`, measured by the storage gate. */
  runsDir: string;
  /** The doctor table, for `/doctor`. */
  doctor?: () => Promise<string>;
  newRunId?: () => RunId;
}

const ANSWERED: DispatchResult = { kind: 'answered' };
/** How long a passed storage check stands before the store is measured again, in ms. */
const STORAGE_RECHECK_MS = 60_000;
const UNKNOWN_COMMAND = 'Unknown command. Send /help for the commands.';

/** Postures no chat option may ask for (PRODUCT.md §6 item 6). */
const REFUSED_POSTURES = new Set(['danger-full-access', 'bypassPermissions']);
const POSTURES: Record<VendorName, readonly string[]> = {
  codex: ['read-only', 'workspace-write'],
  claude: ['default', 'acceptEdits', 'auto', 'dontAsk', 'plan'],
};

/** What {@link Dispatcher.handle} did with a message, for callers and tests. */
export type DispatchResult =
  | { kind: 'ignored' }
  | { kind: 'duplicate' }
  | { kind: 'answered' }
  | { kind: 'refused'; code: ErrorCode }
  | { kind: 'launched'; runId: RunId };

/** The command router. */
export class Dispatcher {
  private readonly storageGate: () => Promise<void>;

  constructor(private readonly deps: DispatcherDeps) {
    const { harness } = deps.config;
    this.storageGate = cachedStorageGate(
      deps.runsDir,
      { artifactQuotaBytes: harness.artifactQuotaBytes, minFreeBytes: harness.minFreeBytes },
      STORAGE_RECHECK_MS,
      () => deps.clock.nowMs(),
    );
  }

  /**
   * Handles one inbound message. Throws only on infrastructure failure (database down); every
   * user-facing refusal becomes a reply.
   */
  async handle(message: InboundMessage): Promise<DispatchResult> {
    const { deps } = this;
    if (message.senderIsBot) return { kind: 'ignored' };
    const role = this.roleOf(message);
    let command: Command | BatonError;
    try {
      command = parseCommand(message.text, message.platform === 'slack' || message.platform === 'discord');
    } catch (err) {
      if (!isBatonError(err)) throw err;
      command = err;
    }
    const action: Action = command instanceof BatonError ? 'launch' : actionOf(command);
    // Authorization comes before anything is written: a stranger leaves no trace.
    if (role === 'stranger' && !mayPerform(role, action, message.isDirect)) return { kind: 'ignored' };
    if (!(await deps.store.recordInbound(message.platform, message.dedupeKey, message.receivedAt))) {
      deps.logger.info({ platform: message.platform, dedupeKey: message.dedupeKey }, 'duplicate inbound event ignored');
      return { kind: 'duplicate' };
    }
    if (!mayPerform(role, action, message.isDirect)) {
      await this.reply(message, GUEST_REFUSAL);
      return { kind: 'refused', code: 'not_authorized' };
    }
    if (command instanceof BatonError) {
      await this.reply(message, command.message);
      return { kind: 'refused', code: command.code };
    }
    try {
      return await this.execute(command, message, role);
    } catch (err) {
      if (!isBatonError(err)) throw err;
      deps.logger.info({ code: err.code, platform: message.platform }, 'command refused');
      await this.reply(message, err.message);
      return { kind: 'refused', code: err.code };
    }
  }

  private roleOf(message: InboundMessage): Role {
    if (message.platform === 'terminal') return 'owner';
    return roleOf(this.deps.config.channels[message.platform], message.senderId);
  }

  private async execute(command: Command, message: InboundMessage, role: Role): Promise<DispatchResult> {
    const { deps } = this;
    switch (command.kind) {
      case 'whoami':
        await this.reply(message, `Your ${message.platform} user id: ${message.senderId}\nThis chat: ${message.chatId}\nRole: ${role}`);
        return ANSWERED;
      case 'help':
        await this.reply(message, deps.config.harness.enabled ? HELP_TEXT : 'Coding agents are disabled on this machine.');
        return ANSWERED;
      case 'launch':
        if (!deps.config.harness.enabled) {
          await this.reply(message, UNKNOWN_COMMAND);
          return { kind: 'refused', code: 'harness_disabled' };
        }
        return { kind: 'launched', runId: await this.launch(command.vendor, command.options, command.task, message) };
      case 'runs':
        await this.reply(
          message,
          command.runId
            ? await this.describeRun(command.runId)
            : formatRunList(await deps.store.recentRuns(10), await deps.store.counts(), await deps.store.deadLetters(5)),
        );
        return ANSWERED;
      case 'cancel':
        await this.reply(message, await this.cancel(command.runId));
        return ANSWERED;
      case 'stop': {
        const active = await deps.store.activeRuns();
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
            (unrecorded.length > 0 ? ` ${unrecorded.map((id) => `[run ${id}]`).join(', ')}: ${UNRECORDED}` : ''),
        );
        return ANSWERED;
      }
      case 'use':
        await this.reply(message, await this.use(command.target, message));
        return ANSWERED;
      case 'doctor':
        await this.reply(message, deps.doctor ? await deps.doctor() : 'The doctor is available from the running service; run `baton doctor` on the machine.');
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
   * Launch gates in PRODUCT.md §6 order (trust was checked by the caller), then the run row and
   * its `started` message in one transaction, then the background process. A resume keeps the
   * parent's vendor and cwd and repeats its model and sandbox, which codex does not remember.
   */
  private async launch(requested: 'codex' | 'claude' | 'default', options: LaunchOptions, task: string, message: InboundMessage, parent?: RunRow): Promise<RunId> {
    const { deps } = this;
    const { harness } = deps.config;
    if (!harness.approved) {
      throw new BatonError(
        'not_approved',
        'Coding agents are not yet approved on this machine. Approve with `baton approve` or set [harness] approved = true, then restart.',
      );
    }
    const vendor = parent ? parent.vendor : requested === 'default' ? harness.defaultVendor : requested;
    if (!deps.vendors.has(vendor)) {
      throw new BatonError('vendor_missing', `The ${vendor} CLI was not found on PATH when baton started. Install it, then restart baton.`);
    }
    const conversation = { platform: message.platform, chatId: message.chatId, threadId: message.threadId };
    const workspace = await resolveWorkspace(parent ? parent.cwd : options.in, await deps.store.conversationDefault(conversation), this.workspaceSettings());
    const model = options.model ?? parent?.options.model;
    const posture = options.posture ?? parent?.options.sandbox;
    if (posture !== undefined) assertPosture(vendor, posture);
    if (parent && !parent.vendorSessionId) {
      throw new BatonError('resume_refused', `[run ${parent.id}] has no ${vendor} session to resume (it never reached the CLI). Start a new run instead.`);
    }
    await this.storageGate();

    const now = deps.clock.now();
    const runId = (deps.newRunId ?? newRunId)();
    const timeoutMinutes = options.timeoutMinutes ?? parent?.options.timeoutMinutes ?? Math.round(harness.defaultTimeoutMs / 60_000);
    const target = { platform: message.platform, chatId: message.chatId, ...(message.threadId ? { threadId: message.threadId } : {}) };
    const run = {
      id: runId,
      parentRunId: parent?.id ?? null,
      vendor,
      status: 'starting' as const,
      task,
      cwd: workspace.cwd,
      worktreeRoot: workspace.worktreeRoot,
      options: { timeoutMinutes, progress: options.progress, ...(model ? { model } : {}), ...(posture ? { sandbox: posture } : {}) },
      origin: { ...target, senderId: message.senderId, messageId: message.messageId },
      supervisor: deps.supervisor.supervisorId,
      createdAt: now,
    };
    const started = await deps.store.createRun(
      run,
      { runId, kind: 'started', target: { ...target, replyToMessageId: message.messageId }, body: startedText(run, parent?.id) },
      harness.maxActive,
      now,
    );
    deps.logger.info({ runId, vendor, cwd: workspace.cwd, parentRunId: parent?.id }, 'run launched');
    const stored = await deps.store.getRun(runId);
    deps.supervisor.start(
      stored!,
      {
        prompt: task,
        ...(model ? { model } : {}),
        ...(posture ? { posture } : {}),
        ...(parent?.vendorSessionId ? { resumeSessionId: parent.vendorSessionId } : {}),
      },
      timeoutMinutes * 60_000,
    );
    await deps.outbox.attempt(started);
    return runId;
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
    if (!this.deps.config.harness.enabled) return { kind: 'ignored' };
    if (parent.status === 'starting' || parent.status === 'running') {
      throw new BatonError('resume_refused', `[run ${parent.id}] is still active. Wait for its outcome, or /cancel ${parent.id}, then reply again.`);
    }
    return { kind: 'launched', runId: await this.launch(parent.vendor, { progress: false }, text, message, parent) };
  }

  /**
   * The run a reply refers to: by the recorded id of the message replied to, else by the
   * `[run …]` tag in that message when the bot sent it, else the newest run of the thread.
   */
  private async findRepliedRun(message: InboundMessage): Promise<RunRow | undefined> {
    const byId = await this.deps.store.findRunByMessage(message.platform, message.chatId, message.replyToMessageId!);
    if (byId) return byId;
    const tag = message.replyToBotText ? findRunIdTag(message.replyToBotText) : undefined;
    if (tag) {
      const run = await this.deps.store.getRun(tag);
      // Only a run that belongs to this conversation: a tag quoted from elsewhere is not a handle.
      if (run && run.origin.platform === message.platform && run.origin.chatId === message.chatId) return run;
    }
    // A reply in a thread (Slack: replyToMessageId is the thread root) continues the newest run
    // started in that thread.
    if (message.threadId !== undefined && message.replyToMessageId === message.threadId) {
      return this.deps.store.latestRunInThread(message.platform, message.chatId, message.threadId);
    }
    return undefined;
  }

  private async use(target: string, message: InboundMessage): Promise<string> {
    const workspace = await resolveWorkspace(target, undefined, this.workspaceSettings());
    await this.deps.store.setConversationDefault({ platform: message.platform, chatId: message.chatId, threadId: message.threadId }, workspace.cwd, this.deps.clock.now());
    return `Runs in this conversation now default to ${workspace.cwd}.`;
  }

  private workspaceSettings() {
    const { config, homeDir } = this.deps;
    return { roots: config.workspace.roots, defaultCwd: config.workspace.defaultCwd, projects: config.projects, homeDir };
  }

  private async describeRun(id: string): Promise<string> {
    const run = isRunId(id) ? await this.deps.store.getRun(id) : undefined;
    if (!run) return 'No coding run found for that id.';
    return formatRun(run, await this.deps.store.deliveriesOfRun(run.id as RunId));
  }

  private async cancel(id: string): Promise<string> {
    const run = isRunId(id) ? await this.deps.store.getRun(id) : undefined;
    if (!run) return 'No coding run found for that id.';
    if (run.status !== 'starting' && run.status !== 'running') return 'That coding run has already finished.';
    switch (await this.cancelRun(run.id as RunId, 'owner_cancel')) {
      case 'cancelled':
        return `[run ${run.id}] cancelled.`;
      case 'requested':
        return `[run ${run.id}] cancel requested from the baton process running it; its outcome follows.`;
      case 'finished':
        return 'That coding run has already finished.';
      case 'unrecorded':
        return `[run ${run.id}] ${UNRECORDED}`;
    }
  }

  /**
   * Cancels a run here when this process supervises it (waiting until none of its processes is
   * left), else asks its supervising process through the database.
   *
   * @returns `finished` when the run was no longer active (or ended another way before the cancel
   *   landed: its outcome says how); `unrecorded` when its processes are stopped but the database
   *   has not taken its end yet — never claimed as cancelled (issue #18 item 8).
   */
  private async cancelRun(runId: RunId, reason: 'owner_cancel' | 'stop'): Promise<'cancelled' | 'requested' | 'finished' | 'unrecorded'> {
    const here = await this.deps.supervisor.cancel(runId, reason);
    if (here) return here.kind === 'cancelled' ? 'cancelled' : here.kind === 'ended' ? 'finished' : 'unrecorded';
    return (await this.deps.store.requestCancel(runId, reason)) ? 'requested' : 'finished';
  }

  private async reply(message: InboundMessage, body: string): Promise<void> {
    await this.deps.outbox.send({
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

/** The answer for a cancel whose run end has not reached the database yet. */
const UNRECORDED =
  'its processes are stopped, but the database is not answering, so the cancel is not recorded yet. baton keeps retrying; the outcome follows once it is written.';

function actionOf(command: Command): Action {
  switch (command.kind) {
    case 'launch':
    case 'cancel':
    case 'stop':
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

/** @throws BatonError `posture_refused` for dangerous or unknown postures. */
function assertPosture(vendor: VendorName, posture: string): void {
  if (REFUSED_POSTURES.has(posture)) {
    throw new BatonError(
      'posture_refused',
      `${posture} is refused: baton never runs an agent without its sandbox or permission checks. Use ${POSTURES[vendor].join(' or ')}, or leave it out to use your own CLI config.`,
    );
  }
  if (!POSTURES[vendor].includes(posture)) {
    throw new BatonError('usage', `${posture} is not a ${vendor} ${vendor === 'codex' ? 'sandbox' : 'mode'}. Use one of: ${POSTURES[vendor].join(', ')}.`);
  }
}
