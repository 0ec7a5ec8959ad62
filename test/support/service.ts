/**
 * Runs baton the way a user does: `node --max-semi-space-size=2 dist/cli/baton.js start` (what `npm start` and the
 * systemd unit run: {@link SERVICE_NODE_FLAGS}) in a
 * child process with an environment the test controls, and waits for its ready banner.
 */
import { execa } from 'execa';
import { fileURLToPath } from 'node:url';
import { SERVICE_NODE_FLAGS } from '../../src/cli/service.js';
import { assertNoLeaks } from './canaries.js';

const CLI = fileURLToPath(new URL('../../dist/cli/baton.js', import.meta.url));

/** A running service process. */
export interface ServiceProcess {
  /** Everything printed so far. */
  stdout(): string;
  stderr(): string;
  pid: number;
  /** The exit code once the process has exited (null when a signal ended it); undefined while it runs. */
  exitCode(): number | null | undefined;
  /**
   * SIGTERM, then waits for exit; resolves with the exit code.
   *
   * @throws Error when a secret of the env showed where it must not (test/support/canaries.ts).
   */
  stop(): Promise<number | undefined>;
  /**
   * SIGKILL (a crash), then waits for exit.
   *
   * @throws Error as {@link stop} does.
   */
  kill(): Promise<void>;
}

/**
 * Spawns `baton start` with exactly `env` (nothing inherited) and resolves once it prints
 * `baton ready`. When it stops, however it stops, no secret of `env` may show in its output, its
 * files, what the fakes received or a fake CLI's environment (test/support/canaries.ts).
 *
 * @throws Error with the output so far when the process exits first or `readyTimeoutMs` passes.
 */
export async function startService(env: Record<string, string>, readyTimeoutMs = 60_000): Promise<ServiceProcess> {
  const child = execa(process.execPath, [...SERVICE_NODE_FLAGS, CLI, 'start'], {
    env,
    extendEnv: false,
    stdin: 'ignore',
    reject: false,
    buffer: false,
    cleanup: true,
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
  let exitCode: number | null | undefined;
  const exited = child.then((result) => {
    exitCode = result.exitCode ?? null;
    return result.exitCode;
  });

  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      // A service left behind would hold its database (the PGlite lock) for the tests after it.
      child.kill('SIGKILL');
      reject(new Error(`baton did not become ready in ${readyTimeoutMs} ms\nstdout:\n${out}\nstderr:\n${err}`));
    }, readyTimeoutMs);
    const check = (): void => {
      if (out.includes('baton ready')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`baton exited (${code}) before it was ready\nstdout:\n${out}\nstderr:\n${err}`));
    });
  });

  return {
    stdout: () => out,
    stderr: () => err,
    pid: child.pid!,
    exitCode: () => exitCode,
    stop: async () => {
      child.kill('SIGTERM');
      const code = await exited;
      await assertNoLeaks(env, { stdout: out, stderr: err });
      return code;
    },
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
      await assertNoLeaks(env, { stdout: out, stderr: err });
    },
  };
}
