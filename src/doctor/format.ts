/**
 * Renders a {@link DoctorReport}: an aligned plain-text table for terminals and chat (monospace),
 * and a stable JSON document for `baton doctor --json` and `GET /health/ready`.
 */
import { exitCode, overallStatus, type DoctorFact, type DoctorReport, type DoctorStatus } from './report.js';

/**
 * The JSON form of a report. Stable API: fields are only ever added; `schema` changes if one is
 * removed or its meaning changes.
 *
 * ```json
 * {
 *   "schema": "baton.doctor/1",
 *   "generatedAt": "2025-01-01T12:00:00.000Z",
 *   "status": "warn",
 *   "exitCode": 0,
 *   "rows": [
 *     { "area": "storage", "status": "ok", "summary": "artifacts 12 KiB of 5.0 GiB quota (0%) · …",
 *       "details": [], "facts": { "runsDir": "/home/u/.baton/harness/runs", "artifactBytes": 12288, … } }
 *   ]
 * }
 * ```
 */
export interface DoctorJson {
  readonly schema: 'baton.doctor/1';
  /** ISO-8601 UTC. */
  readonly generatedAt: string;
  /** Worst row status. */
  readonly status: DoctorStatus;
  /** What `baton doctor` exits with (see `exitCode`). */
  readonly exitCode: 0 | 1;
  /** One per area, in report order; `facts` keys per area are listed on `DoctorRow.facts`. */
  readonly rows: readonly {
    readonly area: string;
    readonly status: DoctorStatus;
    readonly summary: string;
    readonly details: readonly string[];
    readonly facts: Readonly<Record<string, DoctorFact>>;
  }[];
}

/** The report as a {@link DoctorJson} value (plain data, ready for `JSON.stringify`). */
export function doctorJsonValue(report: DoctorReport): DoctorJson {
  return {
    schema: 'baton.doctor/1',
    generatedAt: report.generatedAt.toISOString(),
    status: overallStatus(report),
    exitCode: exitCode(report),
    rows: report.rows.map((row) => ({
      area: row.area,
      status: row.status,
      summary: row.summary,
      details: [...row.details],
      facts: { ...row.facts },
    })),
  };
}

/**
 * The report as JSON text ({@link DoctorJson}), keys in a fixed order.
 *
 * @param indent spaces per level; 0 for one line (HTTP). @default 2
 */
export function toDoctorJson(report: DoctorReport, indent = 2): string {
  return JSON.stringify(doctorJsonValue(report), null, indent);
}

/**
 * The report as an aligned table: `AREA  STATUS  SUMMARY`, detail lines indented under the
 * summary, and a last line with the overall status and exit code. Plain ASCII layout, no colour.
 */
export function formatDoctorTable(report: DoctorReport): string {
  const areaWidth = Math.max('AREA'.length, ...report.rows.map((r) => r.area.length));
  const statusWidth = 'STATUS'.length;
  const pad = ' '.repeat(areaWidth + 2 + statusWidth + 2);
  const lines = [`${'AREA'.padEnd(areaWidth)}  ${'STATUS'.padEnd(statusWidth)}  SUMMARY`];
  for (const row of report.rows) {
    lines.push(`${row.area.padEnd(areaWidth)}  ${row.status.padEnd(statusWidth)}  ${row.summary}`);
    for (const detail of row.details) lines.push(`${pad}- ${detail}`);
  }
  const count = (status: DoctorStatus): number => report.rows.filter((r) => r.status === status).length;
  const warns = count('warn');
  const fails = count('fail');
  lines.push('');
  lines.push(
    `result: ${overallStatus(report)} (${fails} fail, ${warns} warn) · exit ${exitCode(report)} · ${report.generatedAt.toISOString()}`,
  );
  return lines.join('\n');
}
