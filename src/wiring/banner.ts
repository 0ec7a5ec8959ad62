/** The lines `baton start` prints once the service is ready: where things are and what runs. */
import type { StartedChannels } from '../channels/start.js';
import type { BatonConfig } from '../config/index.js';
import type { ServiceInputs } from '../config/service-inputs.js';
import { workspaceWarnings } from '../config/workspace-check.js';
import { describeNodes, type NodeRegistry } from '../fleet/nodes.js';
import type { Detection } from '../harness/detect.js';
import { describeDatabaseKind, type Database } from '../store/database.js';
import type { Runtime } from './runtime.js';

/** What the banner describes. */
export interface BannerFacts {
  inputs: ServiceInputs;
  runtime: Runtime;
  channels: Pick<StartedChannels, 'lines' | 'all'>;
  fleet: NodeRegistry;
  /** Port of the control API on 127.0.0.1. */
  controlPort: number;
}

/** The banner, from `baton started` to `baton ready`. */
export async function serviceBanner(facts: BannerFacts): Promise<string[]> {
  const { inputs, runtime, channels, fleet } = facts;
  const { config } = inputs;
  return [
    `baton started (pid ${process.pid})`,
    `  home: ${inputs.batonHome}${inputs.wroteConfig ? ` (wrote a starter ${inputs.configPath})` : ''}`,
    `  config: ${inputs.configPath}`,
    `  database: ${describeDatabase(runtime.database)}`,
    ...(await fleet.list().then(
      (list) =>
        list.length > 1 ? ['  nodes:', ...describeNodes(list).map((line) => `    ${line}`)] : [`  node: ${fleet.name}`],
      (err: unknown) => [
        `  node: ${fleet.name} (could not list the fleet: ${err instanceof Error ? err.message : String(err)})`,
      ],
    )),
    `  harness: ${describeHarness(config, runtime.detections)}`,
    ...(config.harness.enabled ? (await workspaceWarnings(config)).map((warning) => `  warning: ${warning}`) : []),
    ...channels.lines.map((line) => `  ${line}`),
    `  health: http://127.0.0.1:${facts.controlPort}/health/ready`,
    ...(runtime.adapters.size > 0
      ? []
      : channels.all.size > 0
        ? ['  no channel is connected yet: see the failures above; baton keeps retrying in the background']
        : [
            '  no channel is configured: set TELEGRAM_BOT_TOKEN, SLACK_BOT_TOKEN or DISCORD_BOT_TOKEN (see .env.example) and restart',
          ]),
    'baton ready',
  ];
}

function describeDatabase(database: Database): string {
  return database.note
    ? `${describeDatabaseKind(database.kind)} — ${database.note}`
    : describeDatabaseKind(database.kind);
}

function describeHarness(config: BatonConfig, detections: readonly Detection[]): string {
  if (!config.harness.enabled) return 'disabled ([harness] enabled = false)';
  const consent = config.harness.approved
    ? 'approved'
    : 'NOT approved (run `baton approve`; it applies without a restart)';
  const clis = detections.map((d) =>
    'found' in d ? `${d.vendor} ${d.found.version} at ${d.found.binaryPath}` : `${d.vendor}: ${d.missing}`,
  );
  const roots =
    config.workspace.roots.length === 0
      ? 'no workspace roots (run `baton grant path DIR`; it applies without a restart)'
      : `roots ${config.workspace.roots.join(', ')}`;
  return [consent, ...clis, roots].join('; ');
}
