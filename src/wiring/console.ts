/** Builds the web console of the service from its runtime (src/service/console/). */
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { createConsole, type WebConsole } from '../service/console/console.js';
import type { Runtime } from './runtime.js';
import { vendorsFor } from './vendors.js';

// The app-server codex reader also reads `codex exec` events, so one list serves every run of
// the fleet, whichever transport each was started with.
const TRANSCRIPT_VENDORS = vendorsFor('app-server');

/** The console over `runtime`: reads the shared database, acts through the dispatcher and the approval broker. */
export function buildConsole(
  runtime: Runtime,
  options: { batonHome: string; listen?: string },
  clock: Clock,
  logger: Logger,
): WebConsole {
  const { database, dispatcher, approvals } = runtime;
  return createConsole({
    db: database.db,
    batonHome: options.batonHome,
    ...(options.listen ? { extraHosts: [options.listen] } : {}),
    nowMs: () => clock.nowMs(),
    transcriptOf: (vendor) => TRANSCRIPT_VENDORS.find((v) => v.name === vendor)?.transcript,
    redeliver: (id) => dispatcher.redeliver(id),
    ...(approvals ? { answerApproval: (id, decision, by) => approvals.press(id, decision, by) } : {}),
    ...(database.listen ? { listen: database.listen } : {}),
    logger,
  });
}
