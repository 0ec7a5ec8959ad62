/** `/use PATH|ALIAS|node:path`: the conversation's default directory. */
import { useLocalText, useRemoteText } from '../../wording/dispatch.js';
import { conversationOf, type InboundMessage } from '../../channels/types.js';
import { resolveWorkspace } from '../../harness/workspace.js';
import { workspaceSettingsOf } from '../../queue/workspace-settings.js';
import { answer, type DispatchContext } from '../context.js';
import type { DispatchResult } from '../deps.js';
import { routeOf } from '../launch/route.js';

/** Sets the default; @returns the answer. @throws BatonError when the target is refused. */
async function use(ctx: DispatchContext, target: string, message: InboundMessage): Promise<string> {
  const { deps } = ctx;
  // A directory of another node is kept as `node:path`; that node checks it
  // at each launch.
  const route = await routeOf(deps.fleet, ctx.config, undefined, target);
  if (route.kind === 'remote') {
    const remote = `${route.node}:${route.path}`;
    await deps.store.conversations.setConversationDefault(conversationOf(message), remote, deps.clock.now());
    return useRemoteText(remote, route.node);
  }
  const workspace = await resolveWorkspace(route.target, undefined, workspaceSettingsOf(ctx.config, deps));
  await deps.store.conversations.setConversationDefault(conversationOf(message), workspace.cwd, deps.clock.now());
  return useLocalText(workspace.cwd);
}

/** `/use TARGET`. */
export async function useCommand(
  ctx: DispatchContext,
  command: { target: string },
  message: InboundMessage,
): Promise<DispatchResult> {
  return answer(ctx, message, use(ctx, command.target, message));
}
