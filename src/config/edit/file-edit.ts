/**
 * One checked edit of `config.toml`: the planned text must validate, and must parse to the old
 * data plus exactly the intended change, before the file is replaced atomically.
 */
import { readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parse as parseToml } from 'smol-toml';
import { BatonError } from '../../core/errors.js';
import { parseConfigToml } from '../load.js';
import { ensureConfigFile } from '../template.js';
import { lineDiff } from './line-diff.js';
import { replaceFile } from './replace-file.js';
import { stripBom, Uneditable } from './toml-text.js';

/** The outcome of an edit. */
export interface ConfigEdit {
  /** False when the file already said so; it was then not written. */
  readonly changed: boolean;
  /** Unified-style before/after of the changed lines (1 line of context), for printing; '' when unchanged. */
  readonly diff: string;
}

/** An edit planned on the file's text. */
export interface Plan {
  text: string;
  /** Applies the intended change to freshly parsed old data, to compare with the new text's data. */
  expect: (data: Record<string, unknown>) => void;
}

/** Plans the edit from the text and its config; undefined when the file already says so. */
export type Planner = (
  text: string,
  config: ReturnType<typeof parseConfigToml>,
) => Plan | undefined | Promise<Plan | undefined>;

/**
 * Reads the file (writing the starter template when it is missing), plans the edit, checks it
 * and replaces the file with its mode kept.
 *
 * @throws BatonError `config_invalid` when the file does not validate or cannot be edited safely.
 * @throws BatonError `config_unreadable` when the file cannot be read or written.
 */
export async function editConfig(
  configPath: string,
  homeDir: string,
  what: string,
  plan: Planner,
): Promise<ConfigEdit> {
  const file = path.resolve(configPath);
  let target = await realpath(file).catch(() => file);
  let before = await readText(target, file);
  if (before === undefined) {
    await ensureConfigFile(target);
    target = await realpath(file).catch(() => file);
    before = await readText(target, file);
    if (before === undefined) throw unreadable(file, 'read', undefined);
  }
  const config = parseConfigToml(before, { configPath: file, homeDir });
  let planned: Plan | undefined;
  try {
    planned = await plan(before, config);
  } catch (err) {
    if (!(err instanceof Uneditable)) throw err;
    throw refusal(file, what, err.message);
  }
  if (planned === undefined) return { changed: false, diff: '' };
  try {
    parseConfigToml(planned.text, { configPath: file, homeDir });
    const expected = parseToml(stripBom(before), { integersAsBigInt: 'asNeeded' });
    planned.expect(expected);
    if (!isDeepStrictEqual(expected, parseToml(stripBom(planned.text), { integersAsBigInt: 'asNeeded' }))) {
      throw new Uneditable('the edit would change more than intended');
    }
  } catch (err) {
    throw refusal(file, what, err instanceof Uneditable ? err.message : 'the edited file would not validate', err);
  }
  const mode = (await stat(target)).mode & 0o7777;
  await replaceFile(target, planned.text, mode).catch((err: unknown) => {
    throw unreadable(file, 'write', err);
  });
  return { changed: true, diff: lineDiff(file, before, planned.text) };
}

function refusal(file: string, what: string, reason: string, cause?: unknown): BatonError {
  return new BatonError(
    'config_invalid',
    `Cannot edit ${file} automatically (${reason}); ${what} by hand, then restart baton.`,
    {
      cause,
      details: { file },
    },
  );
}

function unreadable(file: string, verb: 'read' | 'write', err: unknown): BatonError {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return new BatonError(
    'config_unreadable',
    `Cannot ${verb} the configuration file ${file} (${code ?? 'unknown error'}). Check that it is a ${verb}able file.`,
    {
      cause: err,
      details: { file, errno: code },
    },
  );
}

/** The file's text, byte-exact (BOM kept); undefined when it does not exist. */
async function readText(target: string, file: string): Promise<string | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw unreadable(file, 'read', err);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch (err) {
    throw new BatonError('config_invalid', `${file} is not valid UTF-8, as TOML requires. Re-save it as UTF-8.`, {
      cause: err,
      details: { file },
    });
  }
}

/** Table `name` of parsed TOML data, created (without a prototype, as smol-toml builds them) when absent. */
export function table(data: Record<string, unknown>, name: string): Record<string, unknown> {
  const existing = data[name];
  if (typeof existing === 'object' && existing !== null && !Array.isArray(existing))
    return existing as Record<string, unknown>;
  // smol-toml builds tables without a prototype; the deep comparison checks prototypes.
  const created = Object.create(null) as Record<string, unknown>;
  data[name] = created;
  return created;
}
