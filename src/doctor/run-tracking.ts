/**
 * What doctor says about how a run's processes are tracked: a cgroup of its own (complete), or
 * the process tree only (a process that leaves it may outlive `/stop`), and what is missing for
 * the first. Facts: src/harness/run-cgroup.ts; systemd.resource-control(5) `Delegate=`.
 */
import type { CgroupSupport } from '../harness/run-cgroup.js';

/** The cgroup facts doctor is given: what baton (or this process) found, and the installed unit. */
export interface RunCgroupProbe {
  /** From the running service when there is one, else from the doctor process itself. */
  readonly support: CgroupSupport;
  /** The installed baton unit, if any, and whether it delegates its cgroup. */
  readonly unit?: { readonly path: string; readonly user: boolean; readonly delegate: boolean } | undefined;
}

/**
 * The warning lines for the harness row: empty when runs get a cgroup. Else says why not and the
 * fix: run as root, or under systemd with `Delegate=yes` (naming an installed unit that lacks it).
 */
export function runCgroupWarnings(probe: RunCgroupProbe): string[] {
  if ('parent' in probe.support) return [];
  const lines = [
    `runs are followed by their process tree, not a cgroup of their own (${probe.support.unavailable}): a process a run starts in a new session may outlive /stop`,
  ];
  const unit = probe.unit;
  if (unit !== undefined && !unit.delegate) {
    const flag = unit.user ? ' --user' : '';
    const ctl = unit.user ? 'systemctl --user' : 'systemctl';
    lines.push(
      `${unit.path} has no Delegate=yes: run baton service install${flag} again, then ${ctl} daemon-reload && ${ctl} restart baton`,
    );
  } else if (unit === undefined) {
    lines.push(
      'to give runs a cgroup, run baton as root or under systemd: baton service install --user writes a unit with Delegate=yes',
    );
  }
  return lines;
}
