/**
 * Turns zod issues about `config.toml` into lines a person can act on:
 * `[section].key: what is wrong (expected …)`. Config values are not secrets, so offending
 * values are quoted (shortened); environment values never pass through here.
 */
import type { z } from 'zod';
import { CHANNEL_PLATFORMS, CONFIG_KEYS, CONFIG_SECTIONS, PROJECT_ALIAS_PATTERN } from './schema.js';

/** One problem found in `config.toml`. */
export interface ConfigIssue {
  /** Dotted TOML path, e.g. `harness.max_active`, `workspace.roots[1]`, `channels.teams`. */
  readonly key: string;
  /** `[section].key: what is wrong (expected …)`. */
  readonly message: string;
}

type Segment = string | number;

/** Splits an issue path into its TOML table and the rest (`channels.X` is one table). */
function splitPath(segments: readonly Segment[]): { section: string; rest: Segment[] } {
  const [first, second, ...more] = segments;
  if (first === 'channels' && second !== undefined) return { section: `channels.${String(second)}`, rest: more };
  return { section: String(first ?? ''), rest: segments.slice(1) };
}

function joinRest(rest: readonly Segment[]): string {
  return rest.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');
}

function describeValue(value: unknown): string {
  if (typeof value === 'string') {
    const shown = value.length > 40 ? `${value.slice(0, 37)}...` : value;
    return JSON.stringify(shown);
  }
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return 'an array';
  if (isTable(value)) return 'a table';
  if (typeof value === 'object' && value !== null) return 'a date';
  return 'nothing';
}

function valueAt(root: unknown, segments: readonly Segment[]): unknown {
  let current: unknown = root;
  for (const s of segments) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<Segment, unknown>)[s];
  }
  return current;
}

/** Levenshtein distance, for "did you mean" on misspelt keys. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row.push(Math.min((row[j - 1] ?? 0) + 1, (previous[j] ?? 0) + 1, (previous[j - 1] ?? 0) + cost));
    }
    previous = row;
  }
  return previous[b.length] ?? 0;
}

function knownNames(parent: readonly Segment[]): string[] {
  if (parent.length === 0) return [...CONFIG_SECTIONS];
  if (parent.length === 1 && parent[0] === 'channels') return [...CHANNEL_PLATFORMS];
  // Inside a `[projects.NAME]` table: its own keys.
  if (parent.length === 2 && parent[0] === 'projects')
    return CONFIG_KEYS.filter((k) => k.section === 'projects.<alias>').map((k) => k.key);
  const { section } = splitPath(parent);
  return CONFIG_KEYS.filter((k) => k.section === section).map((k) => k.key);
}

function isTable(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !('toISOString' in value);
}

function unknownKeyIssue(parent: readonly Segment[], name: string, input: unknown): ConfigIssue {
  const segments = [...parent, name];
  const { section, rest } = splitPath(segments);
  const names = knownNames(parent);
  const what = isTable(valueAt(input, segments)) ? 'section' : 'key';
  let display = rest.length === 0 ? `[${section}]` : `[${section}].${joinRest(rest)}`;
  // A plain value outside any known table: show it as written, not as a table header.
  if (what === 'key' && rest.length === 0) display = parent.length === 0 ? name : `[${parent.join('.')}].${name}`;
  const key = rest.length === 0 ? section : `${section}.${joinRest(rest)}`;
  const close = names.find((n) => distance(n.toLowerCase(), name.toLowerCase()) <= 2);
  const hint = close === undefined ? `expected one of: ${names.join(', ')}` : `did you mean "${close}"?`;
  return { key, message: `${display}: unknown ${what} (${hint})` };
}

function problem(issue: z.core.$ZodIssue, value: unknown): string {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.expected === 'int' && typeof value === 'number') return `${value} is not a whole number`;
      return `${describeValue(value)} is the wrong type`;
    case 'invalid_union':
      return `${describeValue(value)} is the wrong type`;
    case 'too_big':
      return `${describeValue(value)} is too large`;
    case 'too_small':
      return issue.origin === 'string' ? 'is empty' : `${describeValue(value)} is too small`;
    case 'invalid_value':
      return `${describeValue(value)} is not allowed`;
    case 'invalid_key':
      return 'is not a valid alias name';
    case 'custom':
      return issue.message;
    default:
      return `${describeValue(value)} is not allowed`;
  }
}

function expected(issue: z.core.$ZodIssue, section: string, rest: readonly Segment[]): string | undefined {
  if (issue.code === 'invalid_key') {
    return `a name matching ${String(PROJECT_ALIAS_PATTERN)}: a letter or digit, then letters, digits, "_", "." or "-"`;
  }
  if (rest.length === 0) return 'a table';
  const inTable = section === 'projects' && typeof rest[1] === 'string';
  const keyName = inTable ? rest[1] : section === 'projects' ? '<alias>' : rest[0];
  const docSection = inTable ? 'projects.<alias>' : section;
  const doc = CONFIG_KEYS.find((k) => k.section === docSection && k.key === keyName);
  if (inTable) return typeof rest[2] === 'number' ? (doc?.itemType ?? doc?.type) : doc?.type;
  return typeof rest[1] === 'number' ? (doc?.itemType ?? doc?.type) : doc?.type;
}

/**
 * Formats every zod issue about a parsed `config.toml` as a {@link ConfigIssue}.
 *
 * @param issues `error.issues` from `configFileSchema.safeParse`.
 * @param input the parsed TOML the issues refer to (to quote offending values).
 */
export function formatConfigIssues(issues: readonly z.core.$ZodIssue[], input: unknown): ConfigIssue[] {
  return issues.flatMap((issue): ConfigIssue[] => {
    const segments = issue.path.filter((s): s is Segment => typeof s !== 'symbol');
    const table = tableBranch(issue, valueAt(input, segments));
    if (table) return formatConfigIssues(table, input);
    if (issue.code === 'unrecognized_keys') return issue.keys.map((k) => unknownKeyIssue(segments, k, input));
    const { section, rest } = splitPath(segments);
    const display = rest.length === 0 ? `[${section}]` : `[${section}].${joinRest(rest)}`;
    const key = rest.length === 0 ? section : `${section}.${joinRest(rest)}`;
    const want = expected(issue, section, rest);
    const what = problem(issue, valueAt(input, segments));
    return [{ key, message: `${display}: ${what}${want === undefined ? '' : ` (expected ${want})`}` }];
  });
}

/**
 * A `[projects.NAME]` written as a table that does not fit: the issues of the table's branch of
 * the union (with their full paths), not the path branch's "expected path".
 */
function tableBranch(issue: z.core.$ZodIssue, value: unknown): z.core.$ZodIssue[] | undefined {
  if (issue.code !== 'invalid_union' || typeof value !== 'object' || value === null || Array.isArray(value))
    return undefined;
  const branch = issue.errors.find((errors) => errors.some((e) => e.path.length > 0 || e.code === 'unrecognized_keys'));
  return branch?.map((e) => ({ ...e, path: [...issue.path, ...e.path] }));
}
