/**
 * The pure part of a launch, shared by the local and the remote path: which vendor, model,
 * posture and caps, and the shapes of the vendor request, the run's options, its origin and its
 * `started` message. Nothing here reads the clock, the store or the disk; what can be refused
 * throws a BatonError. The approval decision is in approvals.ts (two rules, one a path).
 */
import { noSessionToResumeText } from '../../wording/launch-gates.js';
import type { InboundMessage } from '../../channels/types.js';
import type { BatonConfig } from '../../config/index.js';
import { BatonError } from '../../core/errors.js';
import type { VendorName } from '../../core/vendor-name.js';
import type { StoredAttachment } from '../../harness/attachments.js';
import { describeAttachments, taskWithTextAttachments } from '../../harness/attachments.js';
import type { RunOptionsJson, RunRow } from '../../store/schema.js';
import type { UsageJson } from '../../types/run-facts.js';
import { runTag } from '../../wording/run-tag.js';
import { startedText } from '../../wording/runs.js';
import { withTranscriptText } from '../../wording/voice.js';
import type { LaunchOptions } from '../command.js';
import { assertPosture } from '../postures.js';
import { runCaps, type RunCaps } from './caps.js';

/** What a launch asks for, once its vendor is known: a resume when `parent` is given. */
export interface LaunchAsk {
  vendor: VendorName;
  options: LaunchOptions;
  task: string;
  message: InboundMessage;
  parent: RunRow | undefined;
}

/** The fields of a new run row that say what it is: its id, its parent, the vendor and the task. */
export function runIdentityOf(runId: string, ask: Pick<LaunchAsk, 'vendor' | 'task' | 'parent' | 'message'>) {
  return {
    id: runId,
    parentRunId: ask.parent?.id ?? null,
    vendor: ask.vendor,
    task: ask.task,
    ...(ask.message.voiceTranscript !== undefined ? { voiceTranscript: ask.message.voiceTranscript } : {}),
  };
}

/** The model and posture a run launches with: the launch's own, else its parent's. */
export interface RunSettings {
  model: string | undefined;
  posture: string | undefined;
}

/** The vendor a launch uses: a resume keeps its parent's; `default` is `[harness] default_vendor`. */
export function vendorOf(
  requested: VendorName | 'default',
  parent: RunRow | undefined,
  harness: BatonConfig['harness'],
): VendorName {
  return parent ? parent.vendor : requested === 'default' ? harness.defaultVendor : requested;
}

/**
 * The model and posture of a run; a resume repeats its parent's, which codex does not remember.
 *
 * @throws BatonError when the posture is not one of the vendor's.
 */
export function settingsOf(vendor: VendorName, options: LaunchOptions, parent: RunRow | undefined): RunSettings {
  const model = options.model ?? parent?.options.model;
  const posture = options.posture ?? parent?.options.sandbox;
  if (posture !== undefined) assertPosture(vendor, posture);
  return { model, posture };
}

/**
 * The run's caps (see {@link runCaps}), then whether a resume has a session to resume.
 *
 * @throws BatonError `usage` (see runCaps), `resume_refused`.
 */
export function capsOf(
  vendor: VendorName,
  options: LaunchOptions,
  harness: BatonConfig['harness'],
  parent: RunRow | undefined,
): RunCaps {
  const caps = runCaps(vendor, options, harness, parent);
  if (parent && !parent.vendorSessionId) {
    throw new BatonError('resume_refused', noSessionToResumeText(runTag(parent.id), vendor));
  }
  return caps;
}

/** The run's wall clock, in minutes: the launch's, else the parent's, else `[harness]`'s. */
export function timeoutMinutesOf(
  options: LaunchOptions,
  parent: RunRow | undefined,
  harness: BatonConfig['harness'],
): number {
  return options.timeoutMinutes ?? parent?.options.timeoutMinutes ?? Math.round(harness.defaultTimeoutMs / 60_000);
}

/** The conversation a run's messages go to. */
export function conversationTarget(message: InboundMessage) {
  return {
    platform: message.platform,
    chatId: message.chatId,
    ...(message.threadId ? { threadId: message.threadId } : {}),
  };
}

/** Where a run came from: the conversation, the sender and the message, and the node it was sent on. */
export function originOf(message: InboundMessage, node: string | undefined) {
  return {
    ...conversationTarget(message),
    senderId: message.senderId,
    messageId: message.messageId,
    ...(node !== undefined ? { node } : {}),
  };
}

/**
 * The request the vendor CLI gets, less what only a local run has (images, the approval token):
 * the task with its text files inline, the settings, the session to resume and the caps.
 */
export function vendorRequestOf(
  task: string,
  attachments: readonly StoredAttachment[],
  settings: RunSettings,
  caps: RunCaps,
  parent: RunRow | undefined,
  sessionUsageBefore: UsageJson | undefined,
) {
  const { model, posture } = settings;
  return {
    prompt: taskWithTextAttachments(task, attachments),
    ...(model ? { model } : {}),
    ...(posture ? { posture } : {}),
    ...(parent?.vendorSessionId ? { resumeSessionId: parent.vendorSessionId } : {}),
    ...(caps.budgetUsd !== undefined ? { maxBudgetUsd: caps.budgetUsd } : {}),
    ...(caps.maxTurns !== undefined ? { maxTurns: caps.maxTurns } : {}),
    ...(sessionUsageBefore ? { sessionUsageBefore } : {}),
  };
}

/** The options a run row keeps. */
export function runOptionsOf(
  timeoutMinutes: number,
  options: LaunchOptions,
  settings: RunSettings,
  approve: boolean,
  caps: RunCaps,
): RunOptionsJson {
  const { model, posture } = settings;
  return {
    timeoutMinutes,
    progress: options.progress,
    ...(model ? { model } : {}),
    ...(posture ? { sandbox: posture } : {}),
    ...(approve ? { approve: true } : {}),
    ...caps,
  };
}

/** The body of a run's `started` message (before any node or queue wording). */
export function startedBodyOf(
  run: Parameters<typeof startedText>[0],
  parent: RunRow | undefined,
  task: string,
  message: InboundMessage,
  attachments: readonly StoredAttachment[],
  branch?: string,
): string {
  const body = startedText(
    run,
    parent?.id,
    { length: task.length, messages: 1 + (message.continuationKeys?.length ?? 0) },
    describeAttachments(attachments),
    branch,
  );
  const started = message.scheduleTag ? `${body} · ${message.scheduleTag}` : body;
  return message.voiceTranscript !== undefined ? withTranscriptText(started, message.voiceTranscript) : started;
}
