/**
 * The verification gate: the owner's commands (`[projects.NAME] verify`, or `verify:"…"`) run
 * after the agent completed, in the run's directory, with the run's own rebuilt environment, in
 * the run's cgroup (or followed by its process tree), under one time limit and the run's output
 * caps. It reports facts; the outcome's words come from the wording module.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import type { VerificationJson, VerifyPlanJson } from '../types/run-facts.js';
import { terminateRun } from './process-tree.js';
import { trackRunProcesses, type CgroupSupport, type RunProcesses } from './run-cgroup.js';

/** Most lines of the output's end a failed verification reports. */
export const VERIFY_TAIL_LINES = 20;
/** Most characters of the output's end a failed verification reports. */
const VERIFY_TAIL_CHARS = 2000;
/** Bytes of output kept in memory for the tail. */
const TAIL_BUFFER_BYTES = 16 * 1024;
/** A verification whose output passes this many times the artifact cap is stopped (as a run is). */
const OUTPUT_LIMIT_FACTOR = 4;

/** What {@link runVerification} needs. */
export interface VerifyInputs {
  /** The run's id: its cgroup is `baton-<run id>`, and `BATON_RUN_ID` in `env` finds strays. */
  runId: string;
  plan: VerifyPlanJson;
  /** The run's directory or worktree. */
  cwd: string;
  /** The run's rebuilt environment (see buildChildEnv); nothing else is inherited. */
  env: Record<string, string>;
  cgroups: CgroupSupport;
  /** Where the whole output goes (`verify.log` in the run directory, 0600), up to `maxLogBytes`. */
  logPath: string;
  /** Cap of the log file, in bytes (the run's `max_run_artifact_mb`). */
  maxLogBytes: number;
  /** Wait between SIGINT and SIGKILL when a command is stopped, in ms. */
  killGraceMs: number;
  /** Aborted when the run is stopped or the service stops: the command under way is stopped. */
  signal?: AbortSignal;
  /** Milliseconds of a monotonic clock. @default performance.now */
  nowMs?: () => number;
}

/** How one command ended. */
interface CommandEnd {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  overLimit: boolean;
  aborted: boolean;
  spawnError?: string;
}

/**
 * Runs the plan's commands in order until one fails. Never throws: a command that cannot start
 * is a `verify_not_run` result with why.
 */
export async function runVerification(inputs: VerifyInputs): Promise<VerificationJson> {
  const nowMs = inputs.nowMs ?? (() => performance.now());
  const startMs = nowMs();
  const deadlineMs = startMs + inputs.plan.timeoutMinutes * 60_000;
  const log = createWriteStream(inputs.logPath, { mode: 0o600, flags: 'w' });
  log.on('error', () => {}); // a full disk loses the log, not the verification
  const output = new OutputSink(log, inputs.maxLogBytes);
  let ran = 0;
  let result: Omit<VerificationJson, 'durationMs' | 'ran'> | undefined;
  for (const command of inputs.plan.commands) {
    ran += 1;
    output.write(Buffer.from(`$ ${command}\n`));
    const end = await runCommand(inputs, command, deadlineMs - nowMs(), output);
    const base = { command, exitCode: end.exitCode, ...(end.signal ? { signal: end.signal } : {}) };
    if (end.spawnError !== undefined) result = { reason: 'verify_not_run', ...base, why: end.spawnError };
    else if (end.aborted) result = { reason: 'verify_not_run', ...base, why: 'stopped' };
    else if (end.timedOut) result = { reason: 'verify_timeout', ...base, tail: output.tail() };
    else if (end.overLimit) result = { reason: 'verify_output_limit', ...base, tail: output.tail() };
    else if (end.exitCode !== 0) result = { reason: 'verify_failed', ...base, tail: output.tail() };
    if (result) break;
  }
  await new Promise<void>((resolve) => log.end(() => resolve()));
  const durationMs = Math.round(nowMs() - startMs);
  const last = inputs.plan.commands.at(-1) ?? '';
  return { ...(result ?? { reason: 'verified', command: last, exitCode: 0 }), ran, durationMs };
}

/** Runs one command with `/bin/sh -c` in its own process group, its leftovers killed after it. */
async function runCommand(
  inputs: VerifyInputs,
  command: string,
  budgetMs: number,
  output: OutputSink,
): Promise<CommandEnd> {
  if (inputs.signal?.aborted) return { exitCode: null, signal: null, timedOut: false, overLimit: false, aborted: true };
  if (budgetMs <= 0) return { exitCode: null, signal: null, timedOut: true, overLimit: false, aborted: false };
  const child = spawn('/bin/sh', ['-c', command], {
    cwd: inputs.cwd,
    env: inputs.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group, so a stop reaches what it started
  });
  const processes: RunProcesses | undefined =
    child.pid === undefined ? undefined : trackRunProcesses(inputs.cgroups, inputs.runId, child.pid);
  const state = { timedOut: false, overLimit: false, aborted: false };
  let stopping: Promise<unknown> | undefined;
  const stop = (): void => {
    stopping ??= terminateRun({
      rootPid: child.pid,
      runId: inputs.runId,
      graceMs: inputs.killGraceMs,
      ...(processes ? { trackedPids: processes.pids } : {}),
    });
  };
  const timer = setTimeout(() => {
    state.timedOut = true;
    stop();
  }, budgetMs);
  const onAbort = (): void => {
    state.aborted = true;
    stop();
  };
  inputs.signal?.addEventListener('abort', onAbort, { once: true });
  const onData = (chunk: Buffer): void => {
    if (output.write(chunk)) return;
    state.overLimit = true;
    stop();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const end = await new Promise<{ exitCode: number | null; signal: string | null; spawnError?: string }>((resolve) => {
    child.once('error', (err: NodeJS.ErrnoException) => {
      if (child.pid === undefined)
        resolve({ exitCode: null, signal: null, spawnError: `${err.code ?? ''} ${err.message}`.trim() });
    });
    child.once('close', (exitCode, signal) => resolve({ exitCode, signal }));
  });
  clearTimeout(timer);
  inputs.signal?.removeEventListener('abort', onAbort);
  if (stopping) await stopping;
  // A server or watcher the command started ends with it, as a run's leftovers do.
  await processes?.killAll(inputs.killGraceMs);
  return { ...end, ...state };
}

/**
 * The verification's output: written to its log up to the cap, its end kept for the tail, and
 * a total past {@link OUTPUT_LIMIT_FACTOR} times the cap refused.
 */
class OutputSink {
  private written = 0;
  private total = 0;
  private end = Buffer.alloc(0);

  constructor(
    private readonly log: WriteStream,
    private readonly maxLogBytes: number,
  ) {}

  /** @returns false once the output passed its limit. */
  write(chunk: Buffer): boolean {
    this.total += chunk.length;
    if (this.written < this.maxLogBytes) {
      const part = chunk.subarray(0, this.maxLogBytes - this.written);
      this.written += part.length;
      this.log.write(part);
    }
    this.end = Buffer.concat([this.end, chunk]);
    if (this.end.length > TAIL_BUFFER_BYTES) this.end = this.end.subarray(-TAIL_BUFFER_BYTES);
    return this.total <= this.maxLogBytes * OUTPUT_LIMIT_FACTOR;
  }

  /** The last {@link VERIFY_TAIL_LINES} non-empty lines, at most {@link VERIFY_TAIL_CHARS} characters. */
  tail(): string {
    const lines = this.end
      .toString('utf8')
      .split('\n')
      .map((line) => line.trimEnd())
      .filter((line) => line !== '');
    return lines.slice(-VERIFY_TAIL_LINES).join('\n').slice(-VERIFY_TAIL_CHARS);
  }
}
