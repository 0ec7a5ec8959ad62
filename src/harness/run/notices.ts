/**
 * The best-effort notices posted about a live run: watchdog advisories, retries, `progress`
 * milestones. A notice that cannot be posted is logged; the run goes on.
 */
import type { ButtonJson } from '../../core/buttons.js';
import type { RunId } from '../../core/ids.js';
import type { RunRow } from '../../store/schema.js';
import type { Vendor, VendorName } from '../vendors/types.js';
import type { HarnessButtonLabels } from '../ports.js';
import type { RunServices } from './context.js';
import { outcomeTarget } from './outcome-target.js';

/** At most one progress notice per this many ms. */
const PROGRESS_INTERVAL_MS = 60_000;

/** Posts a best-effort notice about a run to its origin; failures are logged, never thrown. */
export function notifyRun(services: RunServices, run: RunRow, text: string, buttons?: ButtonJson[]): void {
  const { deps } = services;
  void deps.outbox
    .send({
      runId: run.id as RunId,
      kind: 'notice',
      target: outcomeTarget(run),
      body: `${deps.words.runTag(run.id)} ${text}`,
      ...(buttons ? { buttons } : {}),
    })
    .catch((err: unknown) => deps.logger.warn({ err, runId: run.id }, 'could not post a notice'));
}

/** The buttons of a watchdog advisory, labelled with the wording's `labels`. */
export function advisoryButtons(labels: HarnessButtonLabels, runId: string): ButtonJson[] {
  return [
    { label: labels.keepWaiting, action: 'keep', arg: runId },
    { label: labels.extend, action: 'extend', arg: runId },
    { label: labels.stop, action: 'stop', arg: runId },
  ];
}

/** The login words appended to a retry notice when codex has no login in its home, else empty. */
export async function loginHint(services: RunServices, vendor: VendorName): Promise<string> {
  const { deps } = services;
  if (vendor !== 'codex' || !deps.codexLoginMissing) return '';
  const home = deps.homes.codexHome;
  return (await deps.codexLoginMissing(home)) ? deps.words.codexNoLogin(home) : '';
}

/** Posts milestone notices of a `progress` run. */
export interface ProgressReporter {
  onEvent(event: unknown): void;
  /** No progress after the outcome: a pending batch is dropped when the run ends. */
  stop(): void;
}

/** Milestone notices for `progress` runs: at most one per minute, the latest milestones first. */
export function progressReporter(services: RunServices, run: RunRow, vendor: Vendor): ProgressReporter {
  const { deps } = services;
  let pending: string[] = [];
  let lastPostMs = -Infinity;
  let timer: NodeJS.Timeout | undefined;
  const flush = (): void => {
    timer = undefined;
    if (pending.length === 0) return;
    lastPostMs = deps.clock.nowMs();
    services.tracer.trace('progress', { runId: run.id, milestones: pending.length });
    notifyRun(services, run, deps.words.progress(pending.slice(-5)));
    pending = [];
  };
  return {
    onEvent: (event) => {
      const milestone = vendor.describeProgress?.(event);
      if (!milestone) return;
      pending.push(milestone);
      if (pending.length > 20) pending.shift();
      if (timer) return;
      const waitMs = Math.max(0, lastPostMs + PROGRESS_INTERVAL_MS - deps.clock.nowMs());
      timer = setTimeout(flush, waitMs);
      timer.unref();
    },
    stop: () => {
      if (timer) clearTimeout(timer);
    },
  };
}
