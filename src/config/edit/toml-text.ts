/**
 * Finds and changes one value of `config.toml` as text, so every other byte (comments, order,
 * blank lines, line endings) stays. A small scanner finds statements; anything it cannot place
 * safely (inline tables, dotted keys that define the table) is refused with {@link Uneditable}.
 */

/** A configuration text this module will not edit; the message says why. */
export class Uneditable extends Error {}

/** The text without its byte order mark. */
export function stripBom(text: string): string {
  return text.replace(/^\uFEFF/, '');
}

/** The whole new text: `change` an existing value, else add the key with `addValue`. */
export function edited(place: Place, change: (value: Span) => string, addValue: string): string {
  return 'value' in place ? change(place.value) : place.add(addValue);
}

/** Where `key` of top-level table `name` is: its value's span, or a way to add it. */
export type Place = { value: Span } | { add: (valueText: string) => string };

/**
 * Finds `key` in `[name]`. When absent, `add` returns the whole new text with `key = VALUE`
 * inserted after the table's header (indented like the table's first key), or with a new table
 * appended at the end when there is none.
 *
 * @throws Uneditable when the table or key is written in a form this module does not edit.
 */
export function locate(text: string, name: string, key: string): Place {
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
export function appendToArray(text: string, value: Span, literal: string): string {
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
export function tomlString(value: string): string {
  return JSON.stringify(value).replace(/\x7f/g, '\\u007f');
}

export interface Span {
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
