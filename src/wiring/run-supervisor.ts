/** Builds the run supervisor: how runs' CLIs are started, limited, traced and reported. */
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { BatonConfig } from '../config/index.js';
import type { Clock } from '../core/clock.js';
import { BatonError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { Outbox } from '../delivery/outbox.js';
import type { StatusEditor } from '../delivery/status-editor.js';
import { APPROVAL_SERVER_SCRIPT } from '../harness/approval-names.js';
import type { ApprovalBroker } from '../harness/approvals.js';
import { sessionApprovals } from '../harness/session-approvals.js';
import type { CgroupSupport } from '../harness/run-cgroup.js';
import type { BaseEnv } from '../harness/spawn-env.js';
import { RunSupervisor, type InstalledVendor, type SupervisorDeps } from '../harness/supervisor.js';
import { fileTracer } from '../harness/traces.js';
import type { VendorHomes, VendorName } from '../harness/vendors/types.js';
import { serviceStatePath } from '../service/control-api/service-state.js';
import type { ApprovalStore } from '../store/approvals-repo.js';
import type { RunStore } from '../store/runs-repo.js';
import { codexLoginState } from '../doctor/login.js';
import { harnessWords } from '../wording/harness.js';
import { outcomeText, statusText } from '../wording/runs.js';
import { EXIT_DRAIN_MS, KILL_GRACE_MS } from './vendors.js';

/** What {@link buildSupervisor} needs. */
export interface SupervisorInputs {
  config: BatonConfig;
  batonHome: string;
  store: RunStore;
  outbox: Outbox;
  statusEditor: StatusEditor;
  approvalStore: ApprovalStore;
  clock: Clock;
  logger: Logger;
  installed: ReadonlyMap<VendorName, InstalledVendor>;
  homes: VendorHomes;
  baseEnv: BaseEnv;
  runsDir: string;
  host: string;
  cgroups: CgroupSupport;
  /** This process's control API port, once open; absent: runs launch without approvals. */
  approvalPort?: { port?: number };
  /** The approval broker, for runs whose CLI asks over its session (codex app-server). */
  approvals?: ApprovalBroker;
}

/** The run supervisor of this process, with the config's limits. */
export function buildSupervisor(inputs: SupervisorInputs): RunSupervisor {
  const { config, clock, approvalStore } = inputs;
  return new RunSupervisor({
    store: inputs.store,
    outbox: inputs.outbox,
    clock,
    logger: inputs.logger,
    vendors: inputs.installed,
    homes: inputs.homes,
    baseEnv: inputs.baseEnv,
    runsDir: inputs.runsDir,
    limits: {
      maxEventBytes: config.harness.maxEventBytes,
      maxFramingErrors: config.harness.maxFramingErrors,
      killGraceMs: KILL_GRACE_MS,
      maxRunArtifactBytes: config.harness.maxRunArtifactBytes,
      firstEventMs: config.harness.firstEventMs,
      inactivityMs: config.harness.inactivityMs,
      finishGraceMs: config.harness.finishGraceMs,
      exitDrainMs: EXIT_DRAIN_MS,
      maxPatchBytes: config.harness.maxPatchBytes,
      quotaWarnPercent: config.harness.quotaWarnPercent,
    },
    describeOutcome: outcomeText,
    words: harnessWords,
    codexLoginMissing: async (home) => (await codexLoginState(home)).state === 'not_authenticated',
    status: { editor: inputs.statusEditor, describe: statusText },
    supervisorId: `${inputs.host}:${process.pid}`,
    cgroups: inputs.cgroups,
    ...(inputs.approvalPort ? { approvalServer: approvalServerFor(inputs.approvalPort, inputs.batonHome) } : {}),
    ...(inputs.approvals ? { sessionApprovals: sessionApprovals(inputs.approvals) } : {}),
    onRunEnded: async (runId) => void (await approvalStore.closeGone(clock.now(), runId)),
    tracer: fileTracer(join(inputs.batonHome, 'traces'), clock, inputs.logger),
  });
}

/** How a run's permission-prompt server is started: this node, baton's server script, the run's token and the port. */
function approvalServerFor(
  approvalPort: { port?: number },
  batonHome: string,
): NonNullable<SupervisorDeps['approvalServer']> {
  return (runId, token) => {
    if (approvalPort.port === undefined) {
      throw new BatonError(
        'approvals_unavailable',
        'Tool approvals need the service’s HTTP port, which is not open yet. Send the command again in a moment.',
      );
    }
    return {
      command: process.execPath,
      args: [fileURLToPath(APPROVAL_SERVER_SCRIPT)],
      env: {
        BATON_APPROVAL_RUN_ID: runId,
        BATON_APPROVAL_TOKEN: token,
        BATON_APPROVAL_URL: `http://127.0.0.1:${approvalPort.port}`,
        BATON_SERVICE_STATE: serviceStatePath(batonHome),
      },
    };
  };
}
