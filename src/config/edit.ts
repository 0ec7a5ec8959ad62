/**
 * Edits `config.toml` as text for `baton approve` and `baton grant path DIR`:
 * one value changes and every other byte (comments, order, blank lines, line endings) stays. A
 * small scanner finds statements; anything it cannot place safely (inline tables, dotted keys
 * that define the table) is refused, and every edit is checked twice before the file is replaced:
 * the result must validate, and must parse to the old data plus exactly the intended change.
 */
import { randomBytes } from 'node:crypto';
import { open, readFile, realpath, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parse as parseToml } from 'smol-toml';
import { BatonError } from '../core/errors.js';
import { parseConfigToml } from './load.js';
import { resolveUserPath } from './resolve.js';
import { ensureConfigFile } from './template.js';

/** The outcome of an edit. */
export interface ConfigEdit {
  /** False when the file already said so; it was then not written. */
  readonly changed: boolean;
  /** Unified-style before/after of the changed lines (1 line of context), for printing; '' when unchanged. */
  readonly diff: string;
}

/** Options of {@link grantPath}. */
export interface GrantPathOptions {
  /** Absolute home directory: `~` in `dir` and in existing roots stands for it. */
  readonly homeDir: string;
  /** Absolute directory a relative `dir` is taken from. @default process.cwd() */
  readonly cwd?: string | undefined;
  /** Grant a root that covers the whole disk or the home directory anyway (`--force`). @default false */
  readonly force?: boolean | undefined;
}

/**
 * Sets `[harness] approved = true`: replaces the value of an existing `approved = …` line in
 * `[harness]` (its comment stays), else inserts `approved = true` after the `[harness]` header,
 * else appends a `[harness]` table. A missing file first gets the starter template (mode 0600).
 * The file is replaced atomically (temp file in the same directory, fsync, rename) with its mode.
 *
 * @param configPath path of `config.toml`; a symlink is followed and its target edited.
 * @param options.homeDir only anchors `~` while validating; any absolute path works.
 * @throws BatonError `config_invalid` when the file does not validate, is not UTF-8, or cannot be
 *   edited safely (the message says what to set by hand); the file is then untouched.
 * @throws BatonError `config_unreadable` when the file cannot be read or written.
 */
export async function approveConfig(
  configPath: string,
  options: { readonly homeDir?: string | undefined } = {},
): Promise<ConfigEdit> {
  const homeDir = options.homeDir ?? path.parse(path.resolve(configPath)).root;
  return editConfig(configPath, homeDir, 'set [harness] approved = true', (text, config) => {
    if (config.harness.approved) return undefined;
    return {
      text: edited(
        locate(text, 'harness', 'approved'),
        (v) => `${text.slice(0, v.start)}true${text.slice(v.end)}`,
        'true',
      ),
      expect: (data) => void (table(data, 'harness').approved = true),
    };
  });
}

/**
 * Appends a directory to `[workspace] roots`, as its real path (symlinks followed), written as an
 * absolute TOML basic string. Handles `roots = []`, one-line and multi-line arrays, an absent key
 * and an absent `[workspace]` table; same preservation, checks and atomic replace as
 * {@link approveConfig}. A directory already granted (compared by real path) is not added again.
 *
 * @returns `root`: the real path that is (now) a workspace root.
 * @throws BatonError `cwd_missing` when `dir` does not exist, cannot be resolved or is not a directory.
 * @throws BatonError `root_too_broad` when `dir` is `/`, the home directory or above it, unless `force`.
 * @throws BatonError `config_invalid`, `config_unreadable` as for {@link approveConfig}.
 */
export async function grantPath(
  configPath: string,
  dir: string,
  options: GrantPathOptions,
): Promise<ConfigEdit & { readonly root: string }> {
  const root = await realDirectory(
    resolveUserPath(dir, { homeDir: options.homeDir, baseDir: options.cwd ?? process.cwd() }),
  );
  if (!options.force) {
    const home = await realpath(options.homeDir).catch(() => path.resolve(options.homeDir));
    if (coversAll(root, home)) {
      throw new BatonError(
        'root_too_broad',
        `${root} covers ${root === path.parse(root).root ? 'the whole disk' : `your whole home directory (${home})`}: agents could then work on any file there. ` +
          'Grant the directory that holds your checkouts, e.g. `baton grant path ~/code`, or add --force if you mean it.',
        { details: { path: root } },
      );
    }
  }
  const edit = await editConfig(
    configPath,
    options.homeDir,
    `add ${JSON.stringify(root)} to [workspace] roots`,
    async (text, config) => {
      const granted = await Promise.all(config.workspace.roots.map((r) => realpath(r).catch(() => r)));
      if (granted.includes(root)) return undefined;
      return {
        text: edited(
          locate(text, 'workspace', 'roots'),
          (v) => appendToArray(text, v, tomlString(root)),
          `[${tomlString(root)}]`,
        ),
        expect: (data) => {
          const workspace = table(data, 'workspace');
          workspace.roots = [...(Array.isArray(workspace.roots) ? workspace.roots : []), root];
        },
      };
    },
  );
  return { ...edit, root };
}

/** True when `root` is the filesystem root, the home directory, or a directory above home. */
function coversAll(root: string, home: string): boolean {
  if (root === path.parse(root).root) return true;
  const rel = path.relative(root, home);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

async function realDirectory(dir: string): Promise<string> {
  const fix = `Create it or check the path, then run \`baton grant path ${dir}\` again.`;
  try {
    const real = await realpath(dir);
    if ((await stat(real)).isDirectory()) return real;
    throw new BatonError('cwd_missing', `${dir} is not a directory. Grant a directory instead.`, {
      details: { path: dir },
    });
  } catch (err) {
    if (err instanceof BatonError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT' || code === 'ENOTDIR' ? 'does not exist' : `cannot be resolved (${code ?? 'unknown error'})`;
    throw new BatonError('cwd_missing', `${dir} ${why}. ${fix}`, { cause: err, details: { path: dir, errno: code } });
  }
}

interface Plan {
  text: string;
  /** Applies the intended change to freshly parsed old data, to compare with the new text's data. */
  expect: (data: Record<string, unknown>) => void;
}

type Planner = (
  text: string,
  config: ReturnType<typeof parseConfigToml>,
) => Plan | undefined | Promise<Plan | undefined>;

async function editConfig(configPath: string, homeDir: string, what: string, plan: Planner): Promise<ConfigEdit> {
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

/** Write temp in the same directory, fsync, rename over, fsync the directory (best effort). */
async function replaceFile(target: string, text: string, mode: number): Promise<void> {
  const dir = path.dirname(target);
  const temp = path.join(dir, `.${path.basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', mode);
  try {
    try {
      await handle.chmod(mode);
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, target);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw err;
  }
  const dirHandle = await open(dir, 'r').catch(() => undefined);
  await dirHandle?.sync().catch(() => undefined);
  await dirHandle?.close();
}

function stripBom(text: string): string {
  return text.replace(/^\uFEFF/, '');
}

function table(data: Record<string, unknown>, name: string): Record<string, unknown> {
  const existing = data[name];
  if (typeof existing === 'object' && existing !== null && !Array.isArray(existing))
    return existing as Record<string, unknown>;
  // smol-toml builds tables without a prototype; the deep comparison checks prototypes.
  const created = Object.create(null) as Record<string, unknown>;
  data[name] = created;
  return created;
}

/** The whole new text: `change` an existing value, else add the key with `addValue`. */
function edited(place: Place, change: (value: Span) => string, addValue: string): string {
  return 'value' in place ? change(place.value) : place.add(addValue);
}

/** Where `key` of top-level table `name` is: its value's span, or a way to add it. */
type Place = { value: Span } | { add: (valueText: string) => string };

/**
 * Finds `key` in `[name]`. When absent, `add` returns the whole new text with `key = VALUE`
 * inserted after the table's header (indented like the table's first key), or with a new table
 * appended at the end when there is none.
 *
 * @throws Uneditable when the table or key is written in a form this module does not edit.
 */
function locate(text: string, name: string, key: string): Place {
  const statements = scanStatements(text);
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const firstHeader = statements.findIndex((s) => s.kind === 'header');
  const rootKeys = statements.slice(0, firstHeader === -1 ? undefined : firstHeader);
  if (rootKeys.some((s) => s.path[0] === name))
    throw new Uneditable(`[${name}] is written as a dotted key or an inline table`);
  const headerIndex = statements.findIndex(
    (s) => s.kind === 'header' && !s.arrayTable && s.path.length === 1 && s.path[0] === name,
  );
  const header = statements[headerIndex];
  if (header === undefined) {
    return {
      add: (value) => {
        let out = text.length > 0 && !text.endsWith('\n') ? text + eol : text;
        if (stripBom(out).trim() !== '' && !/\n[ \t]*\r?\n$/.test(out)) out += eol;
        return `${out}[${name}]${eol}${key} = ${value}${eol}`;
      },
    };
  }
  const nextHeader = statements.findIndex((s, i) => i > headerIndex && s.kind === 'header');
  const body = statements.slice(headerIndex + 1, nextHeader === -1 ? undefined : nextHeader);
  if (body.some((s) => s.path[0] === key && s.path.length > 1))
    throw new Uneditable(`${key} is written as a dotted key`);
  const existing = body.find((s) => s.path.length === 1 && s.path[0] === key);
  if (existing !== undefined) return { value: { start: existing.valueStart, end: existing.valueEnd } };
  return {
    add: (value) => {
      const line = `${body[0]?.indent ?? ''}${key} = ${value}`;
      if (header.lineEnd === text.length) return `${text}${eol}${line}`;
      const at = header.lineEnd + (text.startsWith('\r\n', header.lineEnd) ? 2 : 1);
      return `${text.slice(0, at)}${line}${eol}${text.slice(at)}`;
    },
  };
}

/**
 * Adds `literal` after the last entry of the array at `value`: on a new line before a `]` that
 * sits on its own line (the previous entry gets a comma if it lacks one), else as `, literal`.
 */
function appendToArray(text: string, value: Span, literal: string): string {
  if (text[value.start] !== '[') throw new Uneditable('roots is not an array');
  const { items, trailingComma, close } = new Scanner(text, value.start).array();
  const last = items.at(-1);
  const closeLineStart = text.lastIndexOf('\n', close - 1) + 1;
  const closeOnOwnLine =
    closeLineStart > (last?.end ?? value.start) && /^[ \t]*$/.test(text.slice(closeLineStart, close));
  if (!closeOnOwnLine) {
    const at = last?.end ?? value.start + 1;
    const added = last === undefined ? literal : `, ${literal}`;
    // A comment after the `]` keeps its column when the longer line leaves room, else sits two
    // spaces after it (the starter's `roots = []   # for example: …` stays tidy).
    const after = text.slice(close + 1);
    const pad = /^[ \t]+(?=#)/.exec(after)?.[0];
    const tail =
      pad === undefined
        ? after
        : `${' '.repeat(Math.max(pad.length - added.length, Math.min(pad.length, 2)))}${after.slice(pad.length)}`;
    return text.slice(0, at) + added + text.slice(at, close + 1) + tail;
  }
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const lastLineStart = last === undefined ? 0 : text.lastIndexOf('\n', last.start - 1) + 1;
  const lastIndent = last === undefined ? undefined : /^[ \t]*$/.exec(text.slice(lastLineStart, last.start))?.[0];
  const indent = lastIndent ?? `${/^[ \t]*/.exec(text.slice(closeLineStart))?.[0] ?? ''}  `;
  const inserted = `${text.slice(0, closeLineStart)}${indent}${literal}${trailingComma ? ',' : ''}${eol}${text.slice(closeLineStart)}`;
  return last === undefined || trailingComma ? inserted : `${inserted.slice(0, last.end)},${inserted.slice(last.end)}`;
}

/** A TOML basic string: JSON's escapes are TOML's, except that TOML also wants DEL escaped. */
function tomlString(value: string): string {
  return JSON.stringify(value).replace(/\x7f/g, '\\u007f');
}

/** A configuration text this module will not edit; the message says why. */
class Uneditable extends Error {}

interface Span {
  start: number;
  end: number;
}

interface Statement {
  kind: 'header' | 'keyval';
  /** Table path of a header (`[[…]]` headers get `arrayTable`), dotted key of a key/value. */
  path: string[];
  arrayTable: boolean;
  /** Whitespace before the statement on its line. */
  indent: string;
  /** Value span of a key/value (equal to `lineEnd` for headers). */
  valueStart: number;
  valueEnd: number;
  /** Offset where the line break after the statement (and its comment) starts, or the text's length. */
  lineEnd: number;
}

/** Splits TOML text into headers and key/values, skipping comments, blank lines and values' insides. */
function scanStatements(text: string): Statement[] {
  const s = new Scanner(text, text.startsWith('\uFEFF') ? 1 : 0);
  const out: Statement[] = [];
  while (s.pos < text.length) {
    const lineStart = s.pos;
    s.spaces();
    if (s.pos >= text.length || s.newline()) continue;
    if (text[s.pos] === '#') {
      s.comment();
      s.lineEnd();
      continue;
    }
    const indent = text.slice(lineStart, s.pos);
    if (text[s.pos] === '[') {
      const arrayTable = text.startsWith('[[', s.pos);
      s.pos += arrayTable ? 2 : 1;
      const path = s.key();
      s.expect(arrayTable ? ']]' : ']');
      const lineEnd = s.lineEnd();
      out.push({ kind: 'header', path, arrayTable, indent, valueStart: lineEnd, valueEnd: lineEnd, lineEnd });
      continue;
    }
    const path = s.key();
    s.expect('=');
    s.spaces();
    const valueStart = s.pos;
    s.value();
    const valueEnd = s.pos;
    out.push({ kind: 'keyval', path, arrayTable: false, indent, valueStart, valueEnd, lineEnd: s.lineEnd() });
  }
  return out;
}

class Scanner {
  constructor(
    readonly text: string,
    public pos: number,
  ) {}

  fail(): never {
    throw new Uneditable(`unexpected text at offset ${this.pos}`);
  }
  at(s: string): boolean {
    return this.text.startsWith(s, this.pos);
  }
  expect(s: string): void {
    this.spaces();
    if (!this.at(s)) this.fail();
    this.pos += s.length;
  }
  spaces(): void {
    while (this.at(' ') || this.at('\t')) this.pos += 1;
  }
  newline(): boolean {
    const length = this.at('\r\n') ? 2 : this.at('\n') ? 1 : 0;
    this.pos += length;
    return length > 0;
  }
  comment(): void {
    if (this.at('#')) while (this.pos < this.text.length && !this.at('\n') && !this.at('\r\n')) this.pos += 1;
  }
  /** Spaces and a comment to the end of the line; returns where the line break starts. */
  lineEnd(): number {
    this.spaces();
    this.comment();
    const end = this.pos;
    if (!this.newline() && this.pos < this.text.length) this.fail();
    return end;
  }
  blanks(): void {
    for (;;) {
      this.spaces();
      this.comment();
      if (!this.newline()) return;
    }
  }
  key(): string[] {
    const parts: string[] = [];
    for (;;) {
      this.spaces();
      const start = this.pos;
      if (this.at('"') || this.at("'")) {
        this.string();
        const raw = this.text.slice(start, this.pos);
        parts.push(raw.startsWith("'") ? raw.slice(1, -1) : decodeBasic(raw));
      } else {
        while (/[A-Za-z0-9_-]/.test(this.text[this.pos] ?? '')) this.pos += 1;
        if (this.pos === start) this.fail();
        parts.push(this.text.slice(start, this.pos));
      }
      this.spaces();
      if (!this.at('.')) return parts;
      this.pos += 1;
    }
  }
  string(): void {
    const quote = this.text[this.pos] ?? '';
    const triple = quote.repeat(3);
    const multiline = this.at(triple);
    this.pos += multiline ? 3 : 1;
    for (;;) {
      if (this.pos >= this.text.length || (!multiline && this.at('\n'))) this.fail();
      if (quote === '"' && this.at('\\')) this.pos += 2;
      else if (multiline && this.at(triple)) {
        this.pos += 3;
        for (let extra = 0; extra < 2 && this.at(quote); extra += 1) this.pos += 1;
        return;
      } else if (!multiline && this.at(quote)) {
        this.pos += 1;
        return;
      } else this.pos += 1;
    }
  }
  value(): void {
    if (this.at('"') || this.at("'")) return this.string();
    if (this.at('[')) return void this.array();
    if (this.at('{')) return this.inlineTable();
    const start = this.pos;
    while (this.pos < this.text.length && !/[,\]}#\n]/.test(this.text[this.pos] ?? '') && !this.at('\r\n'))
      this.pos += 1;
    while (this.pos > start && /[ \t]/.test(this.text[this.pos - 1] ?? '')) this.pos -= 1;
    if (this.pos === start) this.fail();
  }
  array(): { items: Span[]; trailingComma: boolean; close: number } {
    this.pos += 1;
    const items: Span[] = [];
    let trailingComma = false;
    for (;;) {
      this.blanks();
      if (this.at(']')) return { items, trailingComma, close: this.pos++ };
      const start = this.pos;
      this.value();
      items.push({ start, end: this.pos });
      this.blanks();
      trailingComma = this.at(',');
      if (trailingComma) this.pos += 1;
      else if (!this.at(']')) this.fail();
    }
  }
  inlineTable(): void {
    this.pos += 1;
    for (;;) {
      this.blanks();
      if (this.at('}')) return void (this.pos += 1);
      this.key();
      this.expect('=');
      this.spaces();
      this.value();
      this.blanks();
      if (this.at(',')) this.pos += 1;
      else if (!this.at('}')) this.fail();
    }
  }
}

/** A basic-string key's text; escapes JSON does not know leave it raw (it then matches no name). */
function decodeBasic(raw: string): string {
  try {
    return JSON.parse(raw) as string;
  } catch {
    return raw;
  }
}

/** `--- / +++ / @@` hunk of the lines that differ, with one line of context each side. */
function lineDiff(file: string, before: string, after: string): string {
  const lines = (text: string): string[] => (text === '' ? [] : text.replace(/\r?\n$/, '').split(/\r?\n/));
  const a = lines(before);
  const b = lines(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head += 1;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail])
    tail += 1;
  const before1 = head > 0 ? [` ${a[head - 1]}`] : [];
  const after1 = tail > 0 ? [` ${a[a.length - tail]}`] : [];
  const removed = a.slice(head, a.length - tail).map((l) => `-${l}`);
  const added = b.slice(head, b.length - tail).map((l) => `+${l}`);
  const start = head - before1.length + 1;
  // Unified diff numbers an empty range by the line before it.
  const range = (count: number): string => `${count === 0 ? start - 1 : start},${count}`;
  const context = before1.length + after1.length;
  return [
    `--- ${file}`,
    `+++ ${file}`,
    `@@ -${range(removed.length + context)} +${range(added.length + context)} @@`,
    ...before1,
    ...removed,
    ...added,
    ...after1,
  ].join('\n');
}
