/**
 * The running service's doctor report: `/doctor` in chat and `GET /health/ready` share it. It
 * reads config.toml anew, so edits since start are reported with how to restart.
 */
import { join } from 'node:path';
import type { StartedChannels } from '../channels/start.js';
import { secretValues } from '../config/index.js';
import type { LiveConfig } from '../config/live.js';
import type { ServiceInputs } from '../config/service-inputs.js';
import type { Clock } from '../core/clock.js';
import { collectDoctorReport, type DoctorReport } from '../doctor/index.js';
import type { NodeRegistry } from '../fleet/nodes.js';
import { installedUnitDelegation } from '../service/systemd-unit.js';
import type { Runtime } from './runtime.js';

/** What the service's report is made of. */
export interface ServiceReportDeps {
  inputs: ServiceInputs;
  live: LiveConfig;
  runtime: Runtime;
  channels: Pick<StartedChannels, 'probes'>;
  fleet: NodeRegistry;
  clock: Clock;
}

/** Collects the service's doctor report; an unreachable database is a row of it, not a failure. */
export async function serviceDoctorReport(deps: ServiceReportDeps): Promise<DoctorReport> {
  const { inputs, live, runtime, fleet } = deps;
  const { env, rawEnv } = inputs;
  const { database, store } = runtime;
  await live.refresh();
  const changed = live.describe();
  return collectDoctorReport({
    now: deps.clock.now(),
    homeDir: inputs.homeDir,
    batonHome: inputs.batonHome,
    config: {
      path: inputs.configPath,
      result: { config: live.current, exists: true },
      envFile: { path: join(inputs.batonHome, '.env'), loaded: inputs.envFiles.length > 0 },
      ...(changed ? { changedSinceStart: changed } : {}),
    },
    env: {
      PATH: rawEnv.PATH ?? '',
      CODEX_HOME: env.codexHome,
      CLAUDE_CONFIG_DIR: env.claudeConfigDir,
      passable: rawEnv,
    },
    // An unreachable database is a row of the report (and a 503), not a failed report.
    database: await store.outbox.counts().then(
      (counts) => ({ kind: database.kind, note: database.note, migrationsCurrent: true, counts }),
      (err: unknown) => ({
        error: `the database stopped answering: ${err instanceof Error ? err.message : String(err)}`,
      }),
    ),
    channels: deps.channels.probes(),
    planLimits: await planLimitsOf(runtime, fleet.name, deps.clock.now()),
    nodes: await fleet.list().catch((err: unknown) => ({ error: err instanceof Error ? err.message : String(err) })),
    startedWith: runtime.detections,
    runCgroups: { support: runtime.cgroups, unit: await installedUnitDelegation(inputs.homeDir) },
    secrets: secretValues(env),
  });
}

/** The installed vendors at their plan's usage limit on this node; none when the database does not answer (its row says so). */
async function planLimitsOf(runtime: Runtime, node: string, now: Date): Promise<{ vendor: string; resetsAt: Date }[]> {
  const limits: { vendor: string; resetsAt: Date }[] = [];
  for (const vendor of runtime.installed.keys()) {
    // A database that does not answer is the database row's finding; this line then says nothing.
    const limit = await runtime.store.quota.exhaustedUntil(vendor, node, now).catch(() => undefined);
    if (limit) limits.push({ vendor, resetsAt: limit.resetsAt });
  }
  return limits;
}
