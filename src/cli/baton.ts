#!/usr/bin/env -S node --max-semi-space-size=2
/**
 * The `baton` command. `baton start` runs the service in the foreground until
 * SIGINT/SIGTERM; the other commands do one thing and exit.
 */
import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { findOnPath } from '../harness/detect.js';
import { secretValues } from '../config/index.js';
import { BatonError, isBatonError } from '../core/errors.js';
import { loadInputs, loadPaths, openAskCore, startService, VENDORS, type Service } from '../main.js';
import { isDriverFault } from '../store/driver-faults.js';
import { approveCommand, doctorCommand, grantCommand } from './operator.js';
import { cancelCommand, runsCommand, stopCommand, worktreesCommand } from './admin.js';
import { ask, ASK_USAGE } from './ask.js';
import { patchCommand } from './patch.js';
import { consoleCommand } from './console.js';
import { installService, uninstallService } from './service.js';
import { renderConfigReference } from '../config/reference.js';
import { didYouMean, usageWith } from '../wording/suggest.js';
import { scheduleCliCommand } from './schedule.js';
import { StartGaveUpError, startWithRetries } from './start-attempts.js';

const USAGE = `Usage: baton <command>

Commands:
  start                 run the service in the foreground (Ctrl-C stops it)
  ask [options] TASK    run one task from this terminal and print its outcome
                        (${ASK_USAGE.replace('Usage: baton ask ', '')})
  doctor [--json]       check config, database, channels, CLIs and storage
  approve               consent to coding agents on this machine ([harness] approved = true)
  grant path [--force] DIR  add DIR to the workspace roots runs may use
                        (/, your home and above need --force)
  runs [RUN_ID]         list recent runs, or show one
  patch RUN_ID [--include-ignored]  print a run's patch (to pipe into git apply);
                        --include-ignored adds the files its outcome left out
  console [--open]      print a one-time login link of the web console (--open: open it)
  cancel RUN_ID         cancel an active run
  stop                  cancel every active run
  schedule add every CRON|PHRASE|at TIME to:PLATFORM:CHAT_ID /codex TASK
                        add a schedule (docs/schedules.md); schedule list | rm ID |
                        pause ID | resume ID
  worktrees [prune [--force] [--unlock]]  list the git worktrees of runs, or remove
                        merged and expired ones (--force: also those with uncommitted
                        changes; --unlock: also lift git's lock of one whose directory is gone)
  worktrees restore RUN_ID  check a run's branch out again where its deleted worktree was
  service install [--user]    write a systemd unit that runs baton start
  service uninstall [--user]  remove it
  config-reference      print the table of every config.toml key
  help                  show this help
  version               print the version

Settings: $BATON_HOME/config.toml (default ~/.baton), secrets in the environment or .env.
`;

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

const print = (text: string): void => {
  process.stdout.write(`${text}\n`);
};

/** `text` with every secret value replaced by `[redacted]`. */
function redacted(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) out = out.split(secret).join('[redacted]');
  return out;
}

/**
 * A stray rejection inside a chat SDK must not take the service down: report it (without
 * secrets) and keep serving.
 */
function keepServingOnStrayRejections(secrets: readonly string[]): void {
  process.on('unhandledRejection', (reason) => {
    const text = redacted(reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason), secrets);
    console.error(`baton: unhandled rejection, kept running: ${text}`);
  });
}

/**
 * A fault thrown from inside the PostgreSQL driver's own timers ends one connection, not the
 * service (see src/store/driver-faults.ts): one line, no stack, keep serving. Anything else
 * uncaught is a bug of baton's: it is printed and ends the process as before. The faulted
 * connection can never send again, so the whole pool of `service()` (once started) is replaced.
 */
function keepServingOnDriverFaults(secrets: readonly string[], service: () => Service | undefined): void {
  process.on('uncaughtException', (err) => {
    if (isDriverFault(err)) {
      const text = redacted(`${err.name}: ${err.message}`, secrets);
      console.error(`baton: the PostgreSQL driver failed on a lost connection, kept running (it reconnects): ${text}`);
      service()
        ?.recycleDatabase()
        .catch((recycleErr: unknown) =>
          console.error(
            `baton: replacing the PostgreSQL connections failed: ${recycleErr instanceof Error ? recycleErr.message : String(recycleErr)}`,
          ),
        );
      return;
    }
    console.error('baton: unexpected error, exiting:', err);
    process.exit(1);
  });
}

/** Stops the started service on `signal`, then exits (1 when stopping failed). */
function stop(started: Service, signal: NodeJS.Signals): void {
  console.log(`baton: ${signal} received, stopping (active runs are stopped and reported as interrupted)`);
  started.stop().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error('baton: error while stopping:', err);
      process.exit(1);
    },
  );
}

/** `baton start`: runs the service until a signal stops it. */
async function start(): Promise<void> {
  const inputs = await loadInputs();
  const secrets = secretValues(inputs.env);
  keepServingOnStrayRejections(secrets);
  let service: Service | undefined;
  keepServingOnDriverFaults(secrets, () => service);
  // Signals are handled from the first moment, not once start-up returned: before, a SIGTERM
  // that came while it ran (even just after `baton ready` was printed) ended the process at once,
  // leaving a run that start-up had launched (a queued one) without its service.
  // - Before a database of the operator's (DATABASE_URL) is open nothing needs stopping: exit
  //   now, even while start-up waits for that database to answer.
  // - From then on start-up may launch runs and connect channels, and an embedded database is a
  //   server baton started: stop once start-up has finished.
  // - A second signal exits at once, whatever the phase.
  let phase: 'opening' | 'starting' | 'started' = 'opening';
  let stopWhenStarted: NodeJS.Signals | undefined;
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    signals += 1;
    if (signals > 1) {
      console.error(`baton: ${signal} again, exiting now`);
      process.exit(130);
    }
    if (phase === 'opening' && inputs.env.databaseUrl) {
      console.log(`baton: ${signal} received before the database was open; exiting`);
      process.exit(0);
    }
    if (phase !== 'started') {
      stopWhenStarted = signal;
      console.log(
        `baton: ${signal} received while starting; stopping once start-up has finished (send it again to exit now)`,
      );
      return;
    }
    stop(service!, signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const attempt = (): Promise<Service> => {
      // Another attempt after a lost connection: the last one released all it had opened.
      if (stopWhenStarted) {
        console.log(`baton: ${stopWhenStarted} was received while starting; exiting instead of starting again`);
        process.exit(0);
      }
      phase = 'opening';
      return startService({ inputs, onDatabaseOpen: () => void (phase = 'starting') });
    };
    service = await startWithRetries(attempt, {
      say: (line) => console.error(line),
      sleep,
      events: process,
    });
  } catch (err) {
    if (!(err instanceof StartGaveUpError)) throw err;
    console.error(`baton: ${err.message}`);
    process.exit(1);
  }
  phase = 'started';
  if (stopWhenStarted) stop(service, stopWhenStarted);
}

async function serviceCommand(argv: readonly string[]): Promise<number> {
  const [action, ...flags] = argv;
  const unknown = flags.filter((f) => f !== '--user');
  if ((action !== 'install' && action !== 'uninstall') || unknown.length > 0) {
    const hint =
      action !== 'install' && action !== 'uninstall'
        ? didYouMean(action ?? '', ['install', 'uninstall'])
        : didYouMean(unknown[0]!, ['--user']);
    throw new BatonError(
      'usage',
      usageWith(hint, 'Usage: baton service install [--user] | baton service uninstall [--user]'),
    );
  }
  const inputs = await loadInputs();
  const user = flags.includes('--user');
  const path = inputs.rawEnv.PATH ?? '/usr/local/bin:/usr/bin:/bin';
  // The unit keeps the directories the CLIs are found in now, even ones servicePath would drop.
  const found = await Promise.all(VENDORS.map((vendor) => findOnPath(vendor.binaryName, path)));
  const keepDirs = [
    dirname(process.execPath),
    ...found.filter((p): p is string => p !== undefined).map((p) => dirname(p)),
  ];
  const lines =
    action === 'install'
      ? await installService(
          {
            user,
            homeDir: inputs.homeDir,
            batonHome: inputs.batonHome,
            path,
            keepDirs,
            nodePath: process.execPath,
            userName: userInfo().username,
          },
          process.getuid?.() === 0,
        )
      : await uninstallService({ user, homeDir: inputs.homeDir });
  for (const line of lines) print(line);
  return 0;
}

/** What `baton console` reads: the home, and `[console] listen` for the second link. */
async function consoleContext(): Promise<{ batonHome: string; listen?: string }> {
  const inputs = await loadInputs();
  const listen = inputs.config.console.listen;
  return { batonHome: inputs.batonHome, ...(listen ? { listen } : {}) };
}

/** `baton ask`: the core is built through main, the only user of the wiring. */
async function askCommand(argv: readonly string[]): Promise<number> {
  const inputs = await loadInputs();
  return ask(argv, inputs, (logger) => openAskCore(inputs, logger));
}

/** @throws BatonError `usage` when a command that takes no arguments got some. */
function noMoreArgs(command: string, rest: readonly string[]): void {
  if (rest.length > 0) {
    // `baton start stop` or `baton start --help`: the word may have been meant as the command.
    const hint = didYouMean(rest[0]!, [...COMMANDS, '--help', '--version']);
    throw new BatonError(
      'usage',
      `baton ${command} takes no arguments (got: ${rest.join(' ')}).${hint || ' Run `baton help` for the commands and their options.'}`,
    );
  }
}

/** The command words {@link main} knows, for "did you mean". */
const COMMANDS = [
  'start',
  'ask',
  'doctor',
  'approve',
  'grant',
  'runs',
  'patch',
  'console',
  'cancel',
  'stop',
  'schedule',
  'worktrees',
  'service',
  'config-reference',
  'help',
  'version',
] as const;

/** The commands that take no arguments: any word after them is refused before they start. */
const TAKE_NO_ARGUMENTS: ReadonlySet<string> = new Set(['start', 'stop', 'approve', 'config-reference']);

/** Runs one command; resolves with its exit code (`start` resolves once the service is up). */
async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command !== undefined && TAKE_NO_ARGUMENTS.has(command)) noMoreArgs(command, rest);
  switch (command) {
    case 'start':
      await start();
      return 0;
    case 'ask':
      return askCommand(rest);
    case 'runs':
      if (rest.length > 1) throw new BatonError('usage', 'Usage: baton runs [RUN_ID]');
      return runsCommand(rest, await loadInputs(), print);
    case 'patch':
      return patchCommand(rest, (await loadPaths()).batonHome, (bytes) => process.stdout.write(bytes));
    case 'console':
      return consoleCommand(rest, await consoleContext(), print);
    case 'cancel':
      return cancelCommand(rest, await loadInputs(), print);
    case 'worktrees':
      return worktreesCommand(rest, await loadInputs(), print);
    case 'stop':
      return stopCommand(await loadInputs(), print);
    case 'schedule':
      return scheduleCliCommand(rest, await loadInputs(), print);
    case 'service':
      return serviceCommand(rest);
    case 'doctor':
      return doctorCommand(rest, await loadPaths(), print);
    case 'approve':
      return approveCommand(await loadPaths(), print);
    case 'grant':
      return grantCommand(rest, await loadPaths(), print);
    case 'config-reference':
      print(renderConfigReference());
      return 0;
    case 'version':
    case '--version':
    case '-v':
      print(version());
      return 0;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return 0;
    default:
      process.stderr.write(`baton: unknown command "${command}".${didYouMean(command, COMMANDS)}\n\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (isBatonError(err)) {
      console.error(`baton: ${err.message} [${err.code}]`);
      process.exitCode = err.code === 'usage' ? 2 : 1;
      return;
    }
    console.error('baton: unexpected error:', err);
    process.exitCode = 1;
  },
);
