/**
 * Vendor CLI detection at start: a PATH lookup and one `--version` read,
 * no network. Installing a CLI later takes effect on restart.
 */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { delimiter, isAbsolute, join } from 'node:path';
import { execFile } from 'node:child_process';
import { absolutePath } from './spawn-env.js';
import type { InstalledVendor } from './supervisor.js';
import type { Vendor, VendorName } from './vendors/types.js';

/** Detection result per vendor: installed, or why not. */
export type Detection = { vendor: VendorName; found: InstalledVendor } | { vendor: VendorName; missing: string };

/** First executable regular file named `name` on `path` (a PATH string), or undefined. */
export async function findOnPath(name: string, path: string): Promise<string | undefined> {
  for (const dir of path.split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue; // relative PATH entries would depend on the run's cwd
    const candidate = join(dir, name);
    try {
      if (!(await stat(candidate)).isFile()) continue;
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * Finds each vendor's CLI on PATH and reads its version once (10 s limit).
 *
 * @param env - the environment `--version` runs with (HOME, PATH…), never the service's secrets.
 */
export async function detectVendors(vendors: readonly Vendor[], env: Record<string, string>): Promise<Detection[]> {
  return Promise.all(
    vendors.map(async (vendor): Promise<Detection> => {
      const binaryPath = await findOnPath(vendor.binaryName, env.PATH ?? '');
      if (!binaryPath) return { vendor: vendor.name, missing: `${vendor.binaryName} not found on PATH` };
      // In HOME, never in the caller's directory: `baton ask` runs inside repositories.
      // node:child_process, not execa: this runs at every start, and execa's ~100 modules cost
      // ~150 ms of CPU there. Runs and git use node:child_process too.
      const result = await readVersion(binaryPath, { ...env, PATH: absolutePath(env.PATH ?? '') }, env.HOME ?? '/');
      const version = result.stdout.trim().split('\n')[0] ?? '';
      if (result.exitCode !== 0 || !version) {
        return {
          vendor: vendor.name,
          missing: `${binaryPath} --version failed (${result.exitCode ?? result.signal ?? result.code ?? 'no exit code'})`,
        };
      }
      return { vendor: vendor.name, found: { vendor, binaryPath, version } };
    }),
  );
}

/** `binary --version` with exactly `env`, stdin closed, 10 s limit; never rejects. */
function readVersion(
  binaryPath: string,
  env: Record<string, string>,
  cwd: string,
): Promise<{ stdout: string; exitCode: number | null; signal: string | null; code?: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      binaryPath,
      ['--version'],
      { env, cwd, timeout: 10_000, maxBuffer: 1_048_576, encoding: 'utf8' },
      (err, stdout) => {
        const code =
          err && typeof (err as NodeJS.ErrnoException).code === 'string'
            ? (err as NodeJS.ErrnoException).code
            : undefined;
        resolve({
          stdout: String(stdout ?? ''),
          exitCode: child.exitCode,
          signal: child.signalCode,
          ...(code ? { code } : {}),
        });
      },
    );
    child.stdin?.end();
  });
}
