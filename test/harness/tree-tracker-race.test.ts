/**
 * Where no cgroup can be made, a run's processes are followed by polling its process tree
 * (run-cgroup.ts `treeTracker`, every 250 ms), and `terminateRun` (process-tree.ts) sends SIGINT
 * to the run's process group *before* it first asks the tracker for pids. A tool that dropped its
 * session and environment (`setsid env -i`) and was started after the last poll is then orphaned
 * by the SIGINT (its parent, the CLI, exits) before the tracker walks the tree again: the tool is
 * re-parented and the tracker never links it to the run. The existing supervisor test "still
 * stops a setsid env -i tool it saw start" fails about half of the time for this reason (the
 * tool's pid is read from events.jsonl and /cancel sent within the same poll interval).
 *
 * Here the poll interval is long enough that the window is certain: the CLI is the fake codex
 * (`hang-escape`), real processes, no database.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { terminateRun } from '../../src/harness/process-tree.js';
import { trackRunProcesses } from '../../src/harness/run-cgroup.js';
import { waitFor } from '../support/wait.js';

const FAKE_CODEX = fileURLToPath(new URL('../fakes/fake-codex.mjs', import.meta.url));

describe('process-tree tracking without a cgroup', () => {
  it('stops a setsid env -i tool started since the last poll of the tree', async () => {
    const runId = 'hr_racetree0001';
    const cli = spawn(process.execPath, [FAKE_CODEX, 'exec', '--json', '--', 'hang-escape'], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', BATON_RUN_ID: runId },
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    // As the supervisor does: right after spawn. A poll interval of a minute stands for "the tool
    // started less than one interval before /stop".
    const processes = trackRunProcesses({ unavailable: 'test: no cgroup' }, runId, cli.pid!, 60_000);
    const toolPid = await new Promise<number>((resolve, reject) => {
      let out = '';
      cli.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        const pid = /"tool_pid":(\d+)/.exec(out)?.[1];
        if (pid) resolve(Number(pid));
      });
      cli.once('exit', () => reject(new Error(`fake codex exited: ${out}`)));
    });
    try {
      await waitFor(() => cmdlineStartsWith(toolPid, 'sleep\0'), { what: 'the tool to exec sleep' });
      await terminateRun({ rootPid: cli.pid, runId, graceMs: 2_000, trackedPids: processes.pids });
      const survivors = await processes.killAll(2_000);
      // Either the tool was stopped, or it is named as a survivor (the outcome's process note).
      expect({ gone: isGone(toolPid), named: survivors.includes(toolPid) }).not.toEqual({ gone: false, named: false });
    } finally {
      try {
        process.kill(toolPid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  });
});

/** Whether process `pid` runs `prefix`; false while it is not there yet. */
function cmdlineStartsWith(pid: number, prefix: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith(prefix);
  } catch {
    return false;
  }
}

function isGone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}
