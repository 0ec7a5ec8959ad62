/**
 * Telegram's `parse_mode: HTML` as the Bot API applies it ("Formatting options", HTML style), for
 * the fake Telegram: only the supported tags (b/strong, i/em, u/ins, s/strike/del, span
 * class="tg-spoiler", tg-spoiler, a href, code, pre, blockquote [expandable], tg-emoji), each
 * closed in order; `&` only as `&lt;` `&gt;` `&amp;` `&quot;` or a numeric entity; a `<` that
 * opens no tag is an error. Anything else is refused as the real API refuses it, with 400
 * "Bad Request: can't parse entities: …". The result is the plain text Telegram shows and its
 * entities, offsets and lengths in UTF-16 code units.
 */

/** A message entity as the Bot API returns it. */
export interface ParsedEntity {
  type: string;
  offset: number;
  length: number;
  url?: string;
  language?: string;
}

/** Text Telegram would refuse to parse; `message` is the API's description after "Bad Request: ". */
export class EntityParseError extends Error {}

const TAGS: Record<string, string> = {
  b: 'bold',
  strong: 'bold',
  i: 'italic',
  em: 'italic',
  u: 'underline',
  ins: 'underline',
  s: 'strikethrough',
  strike: 'strikethrough',
  del: 'strikethrough',
  'tg-spoiler': 'spoiler',
  span: 'spoiler',
  a: 'text_link',
  code: 'code',
  pre: 'pre',
  blockquote: 'blockquote',
  'tg-emoji': 'custom_emoji',
};

const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' };

/**
 * Parses `html` as Telegram does.
 *
 * @throws EntityParseError with the API's wording when Telegram would answer "can't parse entities".
 */
export function parseTelegramHtml(html: string): { text: string; entities: ParsedEntity[] } {
  let text = '';
  const entities: ParsedEntity[] = [];
  const open: { name: string; entity: ParsedEntity; at: number }[] = [];
  const fail = (why: string, at: number): never => {
    throw new EntityParseError(`can't parse entities: ${why} at byte offset ${Buffer.byteLength(html.slice(0, at))}`);
  };
  let i = 0;
  while (i < html.length) {
    const c = html[i]!;
    if (c === '&') {
      const m = /^&(?:([a-zA-Z]+)|#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6}));/.exec(html.slice(i));
      if (!m) fail('Unclosed entity or "&" not escaped', i);
      if (m![1] !== undefined) {
        const named = NAMED[m![1].toLowerCase()];
        if (named === undefined) fail(`Unsupported entity "&${m![1]};"`, i);
        text += named;
      } else {
        const code = m![2] !== undefined ? Number(m![2]) : parseInt(m![3]!, 16);
        if (code > 0x10ffff) fail('Invalid character reference', i);
        text += String.fromCodePoint(code);
      }
      i += m![0].length;
      continue;
    }
    if (c !== '<') {
      text += c;
      i += 1;
      continue;
    }
    const end = html.indexOf('>', i);
    if (end === -1) fail('Unclosed start tag', i);
    const tag = html.slice(i + 1, end);
    const closing = /^\/([a-zA-Z-]+)\s*$/.exec(tag);
    if (closing) {
      const name = closing[1]!.toLowerCase();
      const top = open.pop();
      if (!top) fail(`Unexpected end tag "${name}"`, i);
      if (top!.name !== name) fail(`Unmatched end tag, expected "</${top!.name}>", found "</${name}>"`, i);
      top!.entity.length = text.length - top!.entity.offset;
      if (top!.entity.length > 0) entities.push(top!.entity);
      i = end + 1;
      continue;
    }
    const start = /^([a-zA-Z-]+)((?:\s+[a-zA-Z-]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*)\s*$/.exec(tag);
    if (!start) fail('Unsupported start tag or "<" not escaped', i);
    const name = start![1]!.toLowerCase();
    const type = TAGS[name];
    if (!type) fail(`Unsupported start tag "${name}"`, i);
    const attributes = new Map<string, string>();
    for (const attr of start![2]!.matchAll(/([a-zA-Z-]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g)) {
      attributes.set(attr[1]!.toLowerCase(), decode(attr[2] ?? attr[3] ?? attr[4] ?? ''));
    }
    if (name === 'span' && attributes.get('class') !== 'tg-spoiler') fail('Tag "span" must have class "tg-spoiler"', i);
    const entity: ParsedEntity = { type: type!, offset: text.length, length: 0 };
    if (name === 'a') {
      const href = attributes.get('href');
      if (!href) fail('Tag "a" must have attribute "href"', i);
      entity.url = href!;
    }
    if (name === 'code') {
      const language = /^language-(.+)$/.exec(attributes.get('class') ?? '')?.[1];
      const pre = open.at(-1);
      // `<pre><code class="language-x">` is one pre entity with a language.
      if (pre?.name === 'pre' && language) pre.entity.language = language;
    }
    if (name === 'blockquote' && attributes.has('expandable')) entity.type = 'expandable_blockquote';
    open.push({ name, entity, at: i });
    i = end + 1;
  }
  const unclosed = open.pop();
  if (unclosed) fail(`Can't find end tag corresponding to start tag "${unclosed.name}"`, unclosed.at);
  // A `<code>` inside `<pre>` is part of the pre entity, not a second one.
  const kept = entities.filter(
    (e) =>
      !(e.type === 'code' && entities.some((p) => p.type === 'pre' && p.offset === e.offset && p.length === e.length)),
  );
  return { text, entities: kept.sort((a, b) => a.offset - b.offset) };
}

function decode(value: string): string {
  return value.replace(/&(lt|gt|amp|quot);/g, (_w, name: string) => NAMED[name]!);
}
