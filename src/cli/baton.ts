#!/usr/bin/env node
/**
 * The `baton` command. `baton start` runs the service in the foreground until SIGINT/SIGTERM.
 */
import { readFileSync } from 'node:fs';
import { isBatonError } from '../core/errors.js';
import { loadInputs, startService } from '../main.js';

const USAGE = `Usage: baton <command>

Commands:
  start        run the service in the foreground (Ctrl-C stops it)
  help         show this help
  version      print the version

Settings: $BATON_HOME/config.toml (default ~/.baton), secrets in the environment or .env.
`;

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

async function start(): Promise<void> {
  const inputs = await loadInputs();
  const service = await startService({ inputs });
  let signals = 0;
  const shutdown = (signal: NodeJS.Signals): void => {
    signals += 1;
    if (signals > 1) {
      console.error(`baton: ${signal} again, exiting now`);
      process.exit(130);
    }
    console.log(`baton: ${signal} received, stopping (active runs are stopped and reported at next start)`);
    service.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error('baton: error while stopping:', err);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

async function main(argv: readonly string[]): Promise<void> {
  const [command] = argv;
  switch (command) {
    case 'start':
      await start();
      return;
    case 'version':
    case '--version':
    case '-v':
      console.log(version());
      return;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return;
    default:
      process.stderr.write(`baton: unknown command "${command}"\n\n${USAGE}`);
      process.exitCode = 2;
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (isBatonError(err)) {
    console.error(`baton: ${err.message} [${err.code}]`);
    process.exitCode = 1;
    return;
  }
  console.error('baton: unexpected error:', err);
  process.exitCode = 1;
});
