/** Restore worktree, under a refusal whose run's worktree is gone. */
import { worktreeOnOtherNodeText } from '../../wording/presses.js';
import type { InboundPress } from '../../channels/types.js';
import type { DispatcherDeps } from '../deps.js';
import { pressRestoreWorktree } from '../worktree-gone.js';
import { pressedRun, RUN_NOT_KNOWN, type PressAnswer } from './outcome.js';

/** Restores the run's worktree where it is on this node's disk. */
export async function pressRestore(deps: DispatcherDeps, press: InboundPress): Promise<PressAnswer> {
  const run = await pressedRun(deps, press);
  if (!run) return RUN_NOT_KNOWN;
  // Its worktree is on the disk of the node it ran on.
  if (run.node && deps.fleet && run.node !== deps.fleet.name) return worktreeOnOtherNodeText(run.node, run.id);
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
