/**
 * The doctor's report model: one row per area, each with a status, a one-line
 * summary, detail lines and machine-readable facts. The same report feeds `baton doctor`, its
 * `--json` form and `GET /health/ready`.
 */
import type { ChannelPlatform, VendorName } from '../config/schema.js';

/**
 * Health of one area. `fail`: this stops baton from working (unusable database, breached
 * artifact quota, a config the service refuses); `warn`: something to look at; `ok`: fine or
 * merely informational (a channel that is not configured, a disabled harness).
 */
export type DoctorStatus = 'ok' | 'warn' | 'fail';

/** The areas, in report order: `config`, `database`, one `channel:*` per platform, `nodes` (from a running service), `harness`, one `vendor:*` per CLI, `storage`. */
export type DoctorArea =
  | 'config'
  | 'database'
  | `channel:${ChannelPlatform}`
  | 'nodes'
  | 'harness'
  | `vendor:${VendorName}`
  | 'storage';

/** A machine-readable fact; `null` when it could not be determined. Sizes are bytes. */
export type DoctorFact = string | number | boolean | null;

/** One area's findings. No text or fact ever holds a token, key or password. */
export interface DoctorRow {
  readonly area: DoctorArea;
  readonly status: DoctorStatus;
  /** One line, no line break. */
  readonly summary: string;
  /** Further lines: reasons and fixes. */
  readonly details: readonly string[];
  /**
   * Facts per area (keys are stable API):
   * - `config`: `file`, `exists` (null when unreadable), `errorCode` (a BatonError code or null),
   *   `envFile`, `restartNeeded` (true when a running service reports that the file changed in keys
   *   it applies only at start, or into something it cannot use; the row then warns with how to restart).
   * - `database`: `engine` (`pglite` | `postgres` | `embedded-postgres` | null), `location` (data dir or host, never a
   *   URL), `migrationsCurrent`, `activeRuns`, `pendingDeliveries`, `deadLetters`, `error`.
   * - `channel:*`: `configured`, `state` (`connected` | `reconnecting` | `failed` | `stopped` | null).
   * - `harness`: `enabled`, `approved`, `defaultVendor`, `workspaceRoots` (count), `restartNeeded`
   *   (null when no running service reported what it found at start).
   * - `vendor:*`: `path`, `version`, `login` (`authenticated` | `unverified` | `not_authenticated`),
   *   `loginMethod` (`chatgpt` | `api_key` | `credentials_file` | null), `home` (CODEX_HOME or
   *   CLAUDE_CONFIG_DIR used), `restartNeeded` (as for `harness`).
   * - `storage`: `runsDir`, `artifactBytes`, `artifactQuotaBytes`, `quotaBreached`, `freeBytes`,
   *   `minFreeBytes` (0: probe disabled).
   */
  readonly facts: Readonly<Record<string, DoctorFact>>;
}

/** Everything the doctor found. */
export interface DoctorReport {
  /** When the report was made (the caller's clock). */
  readonly generatedAt: Date;
  /** In {@link DoctorArea} order. */
  readonly rows: readonly DoctorRow[];
}

const SEVERITY: Readonly<Record<DoctorStatus, number>> = { ok: 0, warn: 1, fail: 2 };

/** The worst status of the report's rows (`ok` for no rows). */
export function overallStatus(report: DoctorReport): DoctorStatus {
  return report.rows.reduce<DoctorStatus>(
    (worst, row) => (SEVERITY[row.status] > SEVERITY[worst] ? row.status : worst),
    'ok',
  );
}

/**
 * The process exit code of `baton doctor`: 1 only when the artifact quota is breached (§11: it
 * refuses every new run) or the database is unusable; 0 otherwise, whatever else warns or fails.
 */
export function exitCode(report: DoctorReport): 0 | 1 {
  const blocking = report.rows.some(
    (row) =>
      (row.area === 'database' && row.status === 'fail') ||
      (row.area === 'storage' && row.facts.quotaBreached === true),
  );
  return blocking ? 1 : 0;
}
