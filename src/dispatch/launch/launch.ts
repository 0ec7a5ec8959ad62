/**
 * A launch, from the command to the run: the checks every launch passes, the route (this node
 * or another), then the local or the remote path.
 */
import { NOT_APPROVED } from '../../wording/launch-gates.js';
import { conversationOf, type InboundMessage } from '../../channels/types.js';
import { BatonError } from '../../core/errors.js';
import type { RunId } from '../../core/ids.js';
import type { VendorName } from '../../core/vendor-name.js';
import type { RunRow } from '../../store/schema.js';
import type { LaunchOptions } from '../command.js';
import type { LaunchContext } from './context.js';
import { launchLocal } from './local.js';
import { vendorOf } from './plan.js';
import { launchRemote } from './remote.js';
import { routeOf } from './route.js';

/**
 * Launch gates in their fixed order (trust was checked by the caller): approval of coding agents
 * on this machine, the vendor, the conversation default, the route; then {@link launchLocal} or
 * {@link launchRemote}. A resume keeps the parent's vendor and cwd.
 *
 * @throws BatonError `not_approved`, the route's (`node_unknown`, `node_unavailable`) and the path's.
 */
export async function launch(
  ctx: LaunchContext,
  requested: VendorName | 'default',
  options: LaunchOptions,
  task: string,
  message: InboundMessage,
  parent?: RunRow,
): Promise<RunId> {
  const { deps } = ctx;
  const { harness } = ctx.config;
  if (!harness.approved) {
    throw new BatonError('not_approved', NOT_APPROVED);
  }
  const vendor = vendorOf(requested, parent, harness);
  const conversation = conversationOf(message);
  const spans = ctx.spansOf(message);
  const conversationDefault = await (ctx.conversationDefaultOf(message) ??
    deps.store.conversations.conversationDefault(conversation));
  spans?.mark('conversation');
  const route = await routeOf(
    deps.fleet,
    ctx.config,
    parent,
    options.in ?? conversationDefault ?? ctx.config.workspace.defaultCwd,
  );
  spans?.mark('route');
  const ask = { vendor, options, task, message, parent };
  if (route.kind === 'remote') return launchRemote(ctx, route, ask);
  return launchLocal(ctx, route, { ...ask, harness }, conversationDefault);
}
