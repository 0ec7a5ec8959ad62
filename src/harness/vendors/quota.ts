/**
 * What a CLI's stream says about its plan's usage limit: that the limit ended the run, when it
 * resets, and how much of each window is used. Measured on codex 0.171.0 and claude 2.1.332
 * (docs/vendors/quota.md); a vendor module reads its own events into these facts.
 */

/** One window of a subscription plan (a 5-hour or a weekly one), as the CLI reported it. */
export interface PlanWindow {
  /** The vendor's name of the window: claude `five_hour` / `seven_day`, codex `primary` / `secondary`. */
  name: string;
  /** Share of the window used, 0–100 (can pass 100). */
  usedPercent: number;
  /** When the window resets (ISO 8601); absent when the CLI did not say. */
  resetsAt?: string;
  /** How long the window is, in minutes, when the CLI said. */
  windowMinutes?: number;
}

/** The plan facts a run's stream carried. */
export interface QuotaFacts {
  /** The plan's limit ended the run (its terminal event says so). */
  exhausted: boolean;
  /** When the limit that ended the run resets (ISO 8601); absent when the CLI gave no time. */
  resetsAt?: string;
  /** The windows the CLI last reported (claude's `rate_limit_event`), for warnings and `/usage`. */
  windows?: PlanWindow[];
}

/**
 * The start of codex's message at a ChatGPT plan's usage limit (with U+2019), for every plan
 * type (docs/vendors/quota.md).
 */
const CODEX_LIMIT_PREFIX = /^You[’']ve hit your usage limit/;

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/**
 * Whether codex's `turn.failed` message is its usage-limit message, and when it says the limit
 * resets. codex writes the time in the child's local time zone, to the minute, as `3:02 AM` on
 * the same day or `Dec 6th, 2026 4:02 AM` otherwise, and `try again later` with no time; it is
 * read here in this process's time zone (the child's, which inherits it) and rounded up to the
 * next minute, so that a run queued for the reset never starts before it.
 *
 * @param now the moment the message arrived, to place a bare time of day.
 * @returns undefined when the message is not the usage-limit one.
 */
export function codexLimitOf(message: string, now: Date): QuotaFacts | undefined {
  if (!CODEX_LIMIT_PREFIX.test(message)) return undefined;
  const at =
    /try again at (?:([A-Z][a-z]{2})[a-z]* (\d{1,2})(?:st|nd|rd|th)?, (\d{4}) )?(\d{1,2}):(\d{2}) ?([AP]M)/i.exec(
      message,
    );
  if (!at) return { exhausted: true };
  const [, month, day, year, hour, minute, half] = at;
  let hours = Number(hour) % 12;
  if (half?.toUpperCase() === 'PM') hours += 12;
  const reset = new Date(now);
  if (month && day && year) {
    const monthIndex = MONTHS.indexOf(month.toLowerCase());
    if (monthIndex < 0) return { exhausted: true };
    reset.setFullYear(Number(year), monthIndex, Number(day));
  }
  reset.setHours(hours, Number(minute), 0, 0);
  reset.setMinutes(reset.getMinutes() + 1);
  // A bare time earlier than now is that time tomorrow.
  if (!month && reset.getTime() < now.getTime()) reset.setDate(reset.getDate() + 1);
  return { exhausted: true, resetsAt: reset.toISOString() };
}

/** A number field of `record`, when it is a finite number. */
function numberOf(record: Record<string, unknown>, key: string): number | undefined {
  const value = record[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** An epoch-seconds figure as ISO 8601, when it is a plausible one. */
function isoOfEpochSeconds(seconds: number | undefined): string | undefined {
  if (seconds === undefined || seconds <= 0 || seconds > 1e11) return undefined;
  return new Date(seconds * 1000).toISOString();
}

/**
 * The windows and the reset of a claude `rate_limit_info` object (of a `rate_limit_event`, or of
 * an `assistant` error's `api_error_params`): `unifiedWindows.<name>.utilization` is a fraction,
 * `resetsAt` epoch seconds.
 */
export function claudeRateLimitInfoOf(info: unknown): { windows: PlanWindow[]; resetsAt?: string } | undefined {
  if (typeof info !== 'object' || info === null) return undefined;
  const record = info as Record<string, unknown>;
  const windows: PlanWindow[] = [];
  const unified = record['unifiedWindows'];
  if (typeof unified === 'object' && unified !== null) {
    for (const [name, raw] of Object.entries(unified as Record<string, unknown>)) {
      if (typeof raw !== 'object' || raw === null) continue;
      const utilization = numberOf(raw as Record<string, unknown>, 'utilization');
      if (utilization === undefined || utilization < 0) continue;
      const resetsAt = isoOfEpochSeconds(numberOf(raw as Record<string, unknown>, 'resetsAt'));
      windows.push({ name, usedPercent: Math.round(utilization * 1000) / 10, ...(resetsAt ? { resetsAt } : {}) });
    }
  }
  const resetsAt = isoOfEpochSeconds(numberOf(record, 'resetsAt'));
  return { windows, ...(resetsAt ? { resetsAt } : {}) };
}
