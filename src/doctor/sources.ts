/**
 * What the doctor reads, as one explicit deps object: the caller (the `baton doctor` command, or
 * the running service for `GET /health/ready`) gathers what it has; filesystem probes and the
 * `--version` call have real defaults that tests may swap.
 */
import type { NodeView } from '../fleet/nodes.js';
import { absolutePath } from '../harness/spawn-env.js';
import type { ChannelState } from '../channels/types.js';
import type { BatonConfig } from '../config/resolve.js';
import type { ChannelPlatform, VendorName } from '../config/schema.js';
import type { StorageUsage } from '../harness/storage.js';
import type { DatabaseKind } from '../store/database.js';
import type { RunCgroupProbe } from './run-tracking.js';

/** The database as the caller found it; `error` when it could not be opened or queried. */
export type DatabaseProbe =
  | {
      readonly kind: DatabaseKind;
      /** False when migrations under `migrations/` are not all applied (the service applies them at start). */
      readonly migrationsCurrent: boolean;
      /** True when the embedded data directory does not exist yet (nothing was opened or created). */
      readonly notCreated?: boolean | undefined;
      /** Why the embedded engine is PGlite rather than PostgreSQL (e.g. running as root); `Database.note`. */
      readonly note?: string | undefined;
      readonly counts: {
        /** Runs `starting` or `running`. */
        readonly active: number;
        /** Deliveries with status `pending`. */
        readonly pendingDeliveries: number;
        /** Deliveries with status `dead`. */
        readonly deadLetters: number;
      };
    }
  | {
      /** What went wrong, with its fix (e.g. a `database_unavailable` message). Must not hold a URL with a password. */
      readonly error: string;
    };

/** One chat platform as the caller knows it. */
export interface ChannelProbe {
  /** Whether its credentials are set (e.g. TELEGRAM_BOT_TOKEN). */
  readonly configured: boolean;
  /** Why it is not configured (which variable is unset), for the row. */
  readonly reason?: string | undefined;
  /** The adapter's state, when a running service reports it; absent otherwise. */
  readonly state?: ChannelState | undefined;
  /** The adapter's most recent error, if any (already free of tokens). */
  readonly lastError?: string | undefined;
}

/** What the running service found for one vendor at start (`Detection` from `harness/detect.ts` fits). */
export type StartDetection =
  | { readonly vendor: VendorName; readonly found: { readonly binaryPath: string; readonly version: string } }
  | { readonly vendor: VendorName; readonly missing: string };

/** The result of asking a CLI for its version. */
export type VersionProbe = { readonly version: string } | { readonly error: string };

/** Everything {@link collectDoctorReport} reads. */
export interface DoctorSources {
  /** When the report is made (from the caller's clock). */
  readonly now: Date;
  /** Absolute home directory: the vendor homes' default parent, and HOME for `--version`. */
  readonly homeDir: string;
  /** Absolute `$BATON_HOME`; artifacts are measured in `$BATON_HOME/harness/runs`. */
  readonly batonHome: string;
  /** `config.toml`: its path and what `loadConfig` returned or threw. */
  readonly config: {
    readonly path: string;
    /** `$BATON_HOME/.env`, the one `.env` baton reads, and whether it existed and was read. */
    readonly envFile?: { readonly path: string; readonly loaded: boolean } | undefined;
    readonly result: { readonly config: BatonConfig; readonly exists: boolean } | { readonly error: unknown };
    /**
     * From a running service: one line saying the file changed in ways it applies only at start
     * (or cannot use), and how to restart it. Absent when the service runs on what the file says.
     */
    readonly changedSinceStart?: string;
  };
  /** The service environment's PATH (CLI lookup) and vendor-home variables (for `resolveVendorHomes`). */
  readonly env: {
    readonly PATH: string;
    readonly CODEX_HOME?: string | undefined;
    readonly CLAUDE_CONFIG_DIR?: string | undefined;
    /** The whole service environment, from which `[harness] pass_env` picks; only its names are reported. @default none */
    readonly passable?: Readonly<Record<string, string | undefined>> | undefined;
  };
  readonly database: DatabaseProbe;
  readonly channels: Readonly<Record<ChannelPlatform, ChannelProbe>>;
  /** Vendors known to be at their plan's usage limit on this node, as the running service reads its runs; absent outside the service. */
  readonly planLimits?: readonly { readonly vendor: string; readonly resetsAt: Date }[];
  /** The fleet's nodes as the running service lists them; absent outside the service. */
  readonly nodes?: readonly NodeView[] | { error: string };
  /** What a running service found at start, per vendor; absent when none is running or it is unknown. */
  readonly startedWith?: readonly StartDetection[] | undefined;
  /** Whether runs get a cgroup of their own, and the installed unit's `Delegate=`; absent: not reported. */
  readonly runCgroups?: RunCgroupProbe | undefined;
  /** Secret values (e.g. `secretValues(env)`) scrubbed from every text of the report, as a last guard. */
  readonly secrets?: readonly string[] | undefined;
  /** The CLIs to report. @default codex and claude, each looked up by its own name */
  readonly vendors?: readonly { readonly name: VendorName; readonly binaryName: string }[] | undefined;
  /** PATH lookup. @default `findOnPath` from `harness/detect.ts` */
  readonly findOnPath?: ((name: string, pathEnv: string) => Promise<string | undefined>) | undefined;
  /** `--version` of a CLI. @default {@link readCliVersion} */
  readonly readVersion?:
    | ((binaryPath: string, env: { HOME: string; PATH: string }) => Promise<VersionProbe>)
    | undefined;
  /** Artifact and free-space probe. @default `measureStorage` from `harness/storage.ts` */
  readonly measureStorage?: ((runsDir: string, probeFree: boolean) => Promise<StorageUsage>) | undefined;
}

/** How long `--version` may take, in ms. */
export const VERSION_TIMEOUT_MS = 10_000;

/**
 * Runs `BINARY --version` with only HOME and PATH in its environment and stdin closed, and returns
 * the first line of stdout (`codex-cli 0.171.0`, `2.1.197 (Claude Code)`).
 * Never throws: a failure is returned as `{ error }`.
 */
export async function readCliVersion(binaryPath: string, env: { HOME: string; PATH: string }): Promise<VersionProbe> {
  try {
    // In HOME with only absolute PATH entries: doctor may run inside a repository, whose own
    // `node` an empty PATH entry would otherwise start.
    // Loaded on use: execa is ~100 modules the service's start-up does without.
    const { execa } = await import('execa');
    const result = await execa(binaryPath, ['--version'], {
      env: { ...env, PATH: absolutePath(env.PATH) },
      cwd: env.HOME,
      extendEnv: false,
      stdin: 'ignore',
      reject: false,
      timeout: VERSION_TIMEOUT_MS,
    });
    const version =
      String(result.stdout ?? '')
        .trim()
        .split('\n')[0]
        ?.trim() ?? '';
    if (result.exitCode === 0 && version !== '') return { version };
    const why = result.timedOut
      ? `timed out after ${VERSION_TIMEOUT_MS} ms`
      : `exit ${result.exitCode ?? result.signal ?? 'unknown'}`;
    return { error: `${binaryPath} --version failed (${why})` };
  } catch (err) {
    return { error: `${binaryPath} --version failed (${err instanceof Error ? err.message : String(err)})` };
  }
}
