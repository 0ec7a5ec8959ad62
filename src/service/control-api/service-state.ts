/**
 * `$BATON_HOME/service.json`: what the running service records about itself (pid, port of its
 * local control API, admin token), so `baton doctor`, `baton ask` and the per-run approval
 * servers find it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** What the running service records about itself. */
export interface ServiceState {
  pid: number;
  host: string;
  /** Port of the health server on 127.0.0.1. */
  port: number;
  startedAt: string;
  /**
   * Bearer token of `POST /admin/command`. The file is 0600, so only the user baton runs as can
   * read it and send commands; other local users reach the port but not the token.
   */
  adminToken: string;
}

/** `$BATON_HOME/service.json`. */
export function serviceStatePath(batonHome: string): string {
  return join(batonHome, 'service.json');
}

/** Reads the state file, or undefined when absent or unreadable. */
export async function readServiceState(batonHome: string): Promise<ServiceState | undefined> {
  try {
    return JSON.parse(await readFile(serviceStatePath(batonHome), 'utf8')) as ServiceState;
  } catch {
    return undefined;
  }
}
