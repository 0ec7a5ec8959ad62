/**
 * The plan-limit gate of a local launch: while the vendor is known to be at its plan's usage
 * limit on this node, a new run waits queued until the reset (`[harness] on_quota = "queue"`) or
 * is refused (`"refuse"`); a run the Run at reset button launches waits whatever `on_quota` says.
 */
import { BatonError } from '../../core/errors.js';
import { quotaRefusedText } from '../../wording/quota.js';
import type { BatonConfig } from '../../config/index.js';
import type { LaunchContext } from './context.js';
import type { LaunchAsk } from './plan.js';

/** What the gate reads of a local launch. */
type QuotaAsk = Pick<LaunchAsk, 'vendor' | 'options'> & { harness: BatonConfig['harness'] };

/**
 * When the run may start at the earliest, or undefined for as soon as it can.
 *
 * @param approve the run asks for tool approvals, whose token is kept only in memory: it cannot wait queued.
 * @throws BatonError `quota_exhausted` when the run would have to wait and cannot or may not.
 */
export async function quotaWaitOf(ctx: LaunchContext, launch: QuotaAsk, approve: boolean): Promise<Date | undefined> {
  const { deps } = ctx;
  const now = deps.clock.now();
  const exhausted = await deps.store.quota.exhaustedUntil(launch.vendor, deps.fleet?.name, now);
  const asked = launch.options.notBefore && launch.options.notBefore > now ? launch.options.notBefore : undefined;
  const until = [exhausted?.resetsAt, asked].filter((d): d is Date => d !== undefined).sort((a, b) => +b - +a)[0];
  if (!until) return undefined;
  const why = approve
    ? 'approvals'
    : !launch.harness.queue
      ? 'no_queue'
      : launch.harness.onQuota === 'refuse' && !asked
        ? 'refuse'
        : undefined;
  if (why) throw new BatonError('quota_exhausted', quotaRefusedText(launch.vendor, until, why));
  return until;
}
