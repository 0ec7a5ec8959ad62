/**
 * The `vendor:*` rows: each CLI's path and version now (PATH lookup + `--version`), its login
 * state (files only), and whether the running service still uses what it found at start
 * (a CLI installed or changed later takes effect on restart).
 */
import type { VendorName } from '../config/schema.js';
import { claudeLoginState, codexLoginState, type LoginState } from './login.js';
import type { DoctorRow } from './report.js';
import type { StartDetection, VersionProbe } from './sources.js';

/** What the doctor found for one vendor. */
export interface VendorFinding {
  readonly name: VendorName;
  readonly binaryName: string;
  /** CODEX_HOME or CLAUDE_CONFIG_DIR, from `resolveVendorHomes`. */
  readonly home: string;
  /** Absolute path on PATH now, or undefined when not found. */
  readonly path: string | undefined;
  /** `--version` of `path`; undefined when not found. */
  readonly version: VersionProbe | undefined;
  readonly login: LoginState;
  /** Why a restart is needed to use the CLI on PATH now; undefined when not needed or unknown. */
  readonly restart: string | undefined;
  /** Names of the environment a run's child gets (never values), sorted. */
  readonly childEnv?: readonly string[] | undefined;
  /** Those of {@link childEnv} that change the CLI's login, endpoint or billing. */
  readonly accountChanging?: readonly string[] | undefined;
  /** Why concurrent runs sharing this CLI's home are a risk; undefined when they are not. */
  readonly sharedHome?: string | undefined;
  /** How runs drive the CLI, for a vendor with a choice (codex: `[harness] codex_transport`). */
  readonly transport?: 'app-server' | 'exec' | undefined;
}

/** Why runs drive codex the way they do, one sentence per `[harness] codex_transport`. */
const TRANSPORT_DETAIL: Record<'app-server' | 'exec', string> = {
  'app-server':
    'runs go through `codex app-server` ([harness] codex_transport = "app-server", the default; experimental upstream): tool approvals can be asked in the chat',
  exec: 'runs go through `codex exec --json` ([harness] codex_transport = "exec"): a run cannot ask for tool approvals',
};

/** The login state of `vendor` read from its home directory. */
export function loginState(vendor: VendorName, home: string): Promise<LoginState> {
  return vendor === 'codex' ? codexLoginState(home) : claudeLoginState(home);
}

/**
 * Compares the CLI on PATH now with what the running service found at start.
 *
 * @param started the service's detection for this vendor; undefined when no service reported one.
 * @returns the restart hint, or undefined when they match or nothing is known.
 */
export function restartHint(
  now: { path: string | undefined; version: VersionProbe | undefined },
  started: StartDetection | undefined,
): string | undefined {
  if (started === undefined) return undefined;
  const nowVersion = now.version !== undefined && 'version' in now.version ? now.version.version : undefined;
  if (!('found' in started)) {
    return now.path === undefined ? undefined : 'installed since the service started: restart baton to use it';
  }
  const then = `${started.found.version} at ${started.found.binaryPath}`;
  if (now.path === undefined) return `the running service uses ${then}, which is no longer on PATH: restart baton`;
  if (now.path === started.found.binaryPath && (nowVersion === undefined || nowVersion === started.found.version))
    return undefined;
  return `the running service uses ${then}: restart baton to pick up ${nowVersion ?? 'the CLI'} at ${now.path}`;
}

function loginLabel(login: LoginState): string {
  switch (login.state) {
    case 'authenticated':
      return `authenticated (${login.method === 'chatgpt' ? 'ChatGPT login' : login.method === 'api_key' ? 'API key' : login.method === 'model_provider' ? 'model provider' : 'credentials file'})`;
    case 'unverified':
      return 'login unverified';
    case 'not_authenticated':
      return 'not authenticated';
  }
}

/**
 * One vendor's row. With the harness disabled it is informational (`ok`); otherwise a missing
 * CLI, a failing `--version`, a login that is missing or unverified, or a needed restart is `warn` (never `fail`: the other
 * vendor may still work).
 */
export function vendorRow(finding: VendorFinding, harnessEnabled: boolean, serviceReported: boolean): DoctorRow {
  const { path, version, login } = finding;
  const details: string[] = [login.detail];
  let cli: string;
  if (path === undefined) cli = `not installed (${finding.binaryName} not on PATH)`;
  else if (version === undefined || 'error' in version) {
    cli = `${path} (version unknown)`;
    details.unshift(version?.error ?? `${path} --version was not run`);
  } else cli = `${version.version} at ${path}`;
  if (finding.restart !== undefined) details.push(finding.restart);
  if (finding.transport) details.push(TRANSPORT_DETAIL[finding.transport]);
  if (finding.childEnv) details.push(`each run gets: ${finding.childEnv.join(', ')}`);
  const accountChanging = finding.accountChanging ?? [];
  if (accountChanging.length > 0) {
    details.push(
      `[harness] pass_env gives ${finding.name} ${accountChanging.join(', ')}, which change${accountChanging.length === 1 ? 's' : ''} its login, endpoint or billing; remove ${accountChanging.length === 1 ? 'it' : 'them'} from pass_env unless that is meant`,
    );
  }
  if (finding.sharedHome !== undefined) details.push(finding.sharedHome);
  // "unverified" is a warning too: on Linux there is no keychain, so a missing credentials file
  // usually means the CLI is not logged in (seen: claude answering "Not logged in").
  const trouble =
    path === undefined ||
    version === undefined ||
    'error' in version ||
    login.state !== 'authenticated' ||
    finding.restart !== undefined ||
    accountChanging.length > 0 ||
    finding.sharedHome !== undefined;
  return {
    area: `vendor:${finding.name}`,
    status: harnessEnabled && trouble ? 'warn' : 'ok',
    summary: `${cli} · ${loginLabel(login)}`,
    details,
    facts: {
      path: path ?? null,
      version: version !== undefined && 'version' in version ? version.version : null,
      login: login.state,
      loginMethod: login.state === 'authenticated' ? login.method : null,
      home: finding.home,
      restartNeeded: serviceReported ? finding.restart !== undefined : null,
      childEnv: finding.childEnv ? finding.childEnv.join(' ') : null,
      accountChangingEnv: accountChanging.join(' '),
      sharedHomeRisk: finding.sharedHome !== undefined,
      transport: finding.transport ?? null,
    },
  };
}
