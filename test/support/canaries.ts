/**
 * The check every end-to-end service run passes when it stops: no secret it was given (bot and app
 * tokens, signing secrets, API keys, `DATABASE_URL` and its password, any variable whose name looks
 * secret) appears in its stdout or stderr, in any file under `$BATON_HOME` but `.env`, in any
 * request body a fake platform or model server received (test/fakes/received.ts), or in the
 * environment a fake CLI was started with (`child-env.jsonl` beside `$BATON_HOME`, written by
 * test/fakes/fake-codex-chat.mjs). It lives in test/support/service.ts, so no test opts in.
 */
import { lstat, readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { parseEnv as parseDotEnv } from 'node:util';
import { SECRET_ENV_NAMES } from '../../src/config/env.js';
import { looksSecret } from '../../src/harness/pass-env.js';
import { MIN_SECRET_CHARS } from '../../src/core/secret-scrub.js';
import { receivedBodies } from '../fakes/received.js';

/** Where the fake CLIs record the environment they were started with, for a `$BATON_HOME`. */
export const childEnvLog = (batonHome: string): string => join(dirname(batonHome), 'child-env.jsonl');

/** A secret found where it must not be. */
export interface CanarySighting {
  /** The variable that holds it. */
  name: string;
  /** Where: `stdout`, a file path under `$BATON_HOME`, `received: <fake>`, `child env`. */
  where: string;
}

/** Files larger than this are read only up to it, in bytes (database segments stay cheap to scan). */
const MAX_FILE_BYTES = 64 * 1024 * 1024;

/** The secret values of `env` (and of `$BATON_HOME/.env`) by variable name. */
export async function canariesOf(env: Readonly<Record<string, string>>): Promise<Map<string, string>> {
  const vars: Record<string, string | undefined> = { ...env };
  if (env.BATON_HOME) {
    const text = await readFile(join(env.BATON_HOME, '.env'), 'utf8').catch(() => '');
    for (const [name, value] of Object.entries(parseDotEnv(text))) vars[name] ??= value;
  }
  const found = new Map<string, string>();
  for (const [name, value] of Object.entries(vars)) {
    if (value === undefined || value.length < MIN_SECRET_CHARS) continue;
    if (name === 'DATABASE_URL') {
      const password = URL.canParse(value) ? decodeURIComponent(new URL(value).password) : '';
      if (password.length >= MIN_SECRET_CHARS) {
        found.set('DATABASE_URL password', password);
        found.set(name, value);
      }
      continue;
    }
    if (SECRET_ENV_NAMES.includes(name) || looksSecret(name)) found.set(name, value);
  }
  return found;
}

/** Every (secret, place) where one of `canaries` shows, as written or percent-encoded. */
export function sightings(
  canaries: ReadonlyMap<string, string>,
  where: string,
  text: string | Buffer,
): CanarySighting[] {
  const haystack = typeof text === 'string' ? text : text.toString('latin1');
  const out: CanarySighting[] = [];
  for (const [name, value] of canaries) {
    const forms = new Set(
      [value, encodeURIComponent(value)].map((f) => (typeof text === 'string' ? f : Buffer.from(f).toString('latin1'))),
    );
    if ([...forms].some((form) => haystack.includes(form))) out.push({ name, where });
  }
  return out;
}

/** Regular files under `dir`, recursively (symlinks are not followed). */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const files: string[] = [];
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await filesUnder(path)));
    else if (entry.isFile()) files.push(path);
  }
  return files;
}

async function readCapped(path: string): Promise<Buffer> {
  const stat = await lstat(path).catch(() => undefined);
  if (!stat) return Buffer.alloc(0);
  const data = await readFile(path).catch(() => Buffer.alloc(0));
  return data.length > MAX_FILE_BYTES ? data.subarray(0, MAX_FILE_BYTES) : data;
}

/**
 * Where any secret of `env` leaked: the service's output, the files under its `$BATON_HOME`
 * (but `.env`, where the owner put them), the bodies the fakes received, the fake CLIs' env.
 */
export async function findLeaks(
  env: Readonly<Record<string, string>>,
  output: { stdout: string; stderr: string },
): Promise<CanarySighting[]> {
  const canaries = await canariesOf(env);
  if (canaries.size === 0) return [];
  const found = [...sightings(canaries, 'stdout', output.stdout), ...sightings(canaries, 'stderr', output.stderr)];
  const home = env.BATON_HOME;
  if (home) {
    for (const file of await filesUnder(home)) {
      if (file === join(home, '.env')) continue;
      found.push(...sightings(canaries, relative(home, file), await readCapped(file)));
    }
    found.push(...sightings(canaries, 'child env', await readCapped(childEnvLog(home))));
  }
  for (const { source, body } of receivedBodies()) found.push(...sightings(canaries, `received: ${source}`, body));
  return found;
}

/**
 * @throws Error naming each secret (by variable) and where it showed, when {@link findLeaks} finds one.
 */
export async function assertNoLeaks(
  env: Readonly<Record<string, string>>,
  output: { stdout: string; stderr: string },
): Promise<void> {
  const found = await findLeaks(env, output);
  if (found.length === 0) return;
  const lines = [...new Set(found.map((s) => `  ${s.name} in ${s.where}`))];
  throw new Error(
    `a secret given to baton showed where it must not (see test/support/canaries.ts):\n${lines.join('\n')}`,
  );
}
