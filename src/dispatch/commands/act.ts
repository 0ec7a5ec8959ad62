/**
 * What comes between a claimed message and its command: trust, unstorable text, files sent
 * alone, a parse error, a forwarded command; then the command, with its refusal worded.
 */
import type { InboundMessage } from '../../channels/types.js';
import { BatonError, isBatonError } from '../../core/errors.js';
import { FORWARDED_REFUSAL, heldFilesText, UNSTORABLE_TEXT } from '../../wording/dispatch.js';
import type { Command } from '../command.js';
import type { DispatchContext } from '../context.js';
import type { DispatchResult } from '../deps.js';
import { HOLD_ATTACHMENTS_MS } from '../inbound/held-attachments.js';
import { withoutRestart, withRestartHow } from '../refusal-text.js';
import { GUEST_REFUSAL, mayPerform, type Action, type Role } from '../trust.js';
import { refusalButtons } from '../worktree-gone.js';
import { execute } from './execute.js';

/** Files sent without a command or reply: the owner's are held for the next launch. */
async function holdFiles(ctx: DispatchContext, message: InboundMessage, role: Role): Promise<DispatchResult> {
  const attachments = message.attachments ?? [];
  // Only the owner launches, so only the owner's files are held for a launch.
  if (role !== 'owner') {
    await ctx.reply(message, GUEST_REFUSAL);
    return { kind: 'refused', code: 'not_authorized' };
  }
  ctx.held.hold(message, attachments);
  await ctx.reply(message, heldFilesText(attachments.length, HOLD_ATTACHMENTS_MS / 60_000));
  return { kind: 'answered' };
}

/** Runs the command; a BatonError becomes the reply (with how to restart, where that applies). */
async function executeWorded(
  ctx: DispatchContext,
  command: Command,
  message: InboundMessage,
  role: Role,
): Promise<DispatchResult> {
  const { deps } = ctx;
  try {
    return await execute(ctx, command, message, role);
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
    await ctx.reply(
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

/**
 * Acts on a claimed message. Throws only on infrastructure failure; every refusal is a reply.
 */
export async function act(
  ctx: DispatchContext,
  message: InboundMessage,
  role: Role,
  action: Action,
  command: Command | BatonError,
): Promise<DispatchResult> {
  if (!mayPerform(role, action, message.isDirect)) {
    await ctx.reply(message, GUEST_REFUSAL);
    return { kind: 'refused', code: 'not_authorized' };
  }
  if (message.text.includes('\u0000')) {
    await ctx.reply(message, UNSTORABLE_TEXT);
    return { kind: 'refused', code: 'text_unstorable' };
  }
  if (message.attachments?.length && message.text.trim() === '' && !message.replyToMessageId)
    return holdFiles(ctx, message, role);
  if (command instanceof BatonError) {
    await ctx.reply(message, command.message);
    return { kind: 'refused', code: command.code };
  }
  if (message.forwarded) {
    ctx.deps.logger.info({ platform: message.platform }, 'forwarded command refused');
    await ctx.reply(message, FORWARDED_REFUSAL);
    return { kind: 'refused', code: 'forwarded_message' };
  }
  return executeWorded(ctx, command, message, role);
}
