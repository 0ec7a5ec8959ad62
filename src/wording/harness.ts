/**
 * The words of what the harness reports while a run is under way: notices about a silent or
 * retrying CLI, why a launch failed, what may outlive a run, the captions of its files. The
 * harness takes them through its `HarnessWords` port; the wiring hands it {@link harnessWords}.
 */
import { quotaWarningText } from './quota.js';
import { formatDurationMs } from '../core/clock.js';
import { runTag } from './run-tag.js';

/**
 * How the person who launched a run stops it, in the words of where they launched it: a chat
 * command, or in a terminal (`baton ask`) Ctrl-C or `baton cancel` from another terminal.
 */
export function howToStop(platform: string, runId: string): string {
  return platform === 'terminal'
    ? `press Ctrl-C, or run \`baton cancel ${runId}\` in another terminal, to stop it`
    : `/cancel ${runId} to stop it`;
}

/** The harness's sentences, in the shape of its `HarnessWords` port. */
export const harnessWords = {
  runTag,
  vendorMissing: (vendor: string): string =>
    `The ${vendor} CLI was not found on PATH when baton started. Install it, then restart baton.`,
  approvalsUnavailable: (vendor: string): string =>
    `Tool approvals are not available for ${vendor} runs here. Launch without approve (and without mode:default).`,
  taskTooLong: (facts: { chars: number; vendor: string; maxChars: number }): string =>
    `The task is ${facts.chars.toLocaleString('en-US')} characters; ${facts.vendor} accepts at most ${facts.maxChars.toLocaleString('en-US')}. Shorten it and send it again.`,
  noFirstEvent: (facts: { vendor: string; afterMs: number; platform: string; runId: string }): string =>
    `No event from ${facts.vendor} after ${formatDurationMs(facts.afterMs)}: often a login or config problem. The run continues; ${howToStop(facts.platform, facts.runId)}.`,
  silence: (facts: { vendor: string; forMs: number; platform: string; runId: string }): string =>
    `No output from ${facts.vendor} for ${formatDurationMs(facts.forMs)}. The run continues; ${howToStop(facts.platform, facts.runId)}.`,
  retrying: (facts: { vendor: string; retry: string; platform: string; runId: string }): string =>
    `${facts.vendor} is retrying: ${facts.retry.split('\n')[0]!.slice(0, 300)}. The run continues; ${howToStop(facts.platform, facts.runId)}.`,
  codexNoLogin: (home: string): string => ` codex has no login in ${home}: run \`CODEX_HOME=${home} codex login\`.`,
  loginFallback: (vendor: string, home: string): string => `Log ${vendor} in for ${home}, then send the task again.`,
  eventLeftOut: (facts: { bytes: number; keptBytes: number; path: string }): string =>
    `An event of ${facts.bytes.toLocaleString('en-US')} bytes was longer than max_run_artifact_mb and was left out; its first ${facts.keptBytes.toLocaleString('en-US')} bytes are in ${facts.path}.`,
  progress: (milestones: readonly string[]): string => `progress: ${milestones.join('; ')}`,
  processesSurvived: (pids: readonly number[]): string =>
    `Processes of this run may still be running (pid ${pids.join(', ')}): baton could not stop them.`,
  processesMayHaveLeftTree: (): string =>
    'This machine gives baton no cgroup for runs: a process that left the run’s process tree (e.g. started with setsid) may have survived.',
  spawnFailed: (binaryPath: string, detail: string): string => `Could not start ${binaryPath}: ${detail}`,
  startFailed: (message: string): string => `Could not start the run: ${message}`,
  verifyingStep: (commands: readonly string[]): string => `verifying: ${commands.join('; ')}`,
  resultCaption: (runId: string): string => `${runTag(runId)} The whole answer: result.md`,
  patchCaption: (runId: string): string => `${runTag(runId)} The run's diff: git apply ${runId}.patch`,
  quotaWarning: quotaWarningText,
  buttons: {
    resume: 'Resume',
    fix: 'Fix',
    keepWaiting: 'Keep waiting',
    extend: '+30 min',
    stop: 'Stop',
    runAtReset: 'Run at reset',
    runOn: (vendor: string) => `Run on ${vendor}`,
  },
  interruptedByRestart: 'baton restarted while this run was active; the run was stopped and is not relaunched.',
};
