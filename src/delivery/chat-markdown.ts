/**
 * baton's message bodies are Markdown (the agent's answer as the agent wrote it; baton's own lines
 * with diff stats and commands in code). This renders one part of a body for a platform from the
 * tokens of marked's lexer (GitHub-flavoured Markdown): Telegram HTML (Bot API "Formatting
 * options", `parse_mode: HTML`) and Slack mrkdwn (docs.slack.dev "Formatting text for app
 * surfaces"). Discord renders Markdown itself and takes the part as it is.
 *
 * Line breaks are kept as written (a chat message is read line by line, not reflowed). All text is
 * escaped, so nothing in a body — the agent's answer, a file name, a task — can open a tag, an
 * entity or a Slack control sequence; raw HTML in the Markdown is shown as text; links keep only
 * http(s) and mailto targets.
 */
import { Lexer, Tokenizer, type Token, type Tokens } from 'marked';

/** How one platform writes each construct. */
interface Dialect {
  text(text: string): string;
  bold(inner: string): string;
  italic(inner: string): string;
  strike(inner: string): string;
  code(text: string): string;
  block(text: string, language: string): string;
  quote(inner: string): string;
  link(href: string, inner: string): string;
}

/** Telegram's HTML entities: `<`, `>` and `&` must be escaped everywhere; `"` too in attributes. */
export function escapeTelegramHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const TELEGRAM: Dialect = {
  text: escapeTelegramHtml,
  bold: (inner) => `<b>${inner}</b>`,
  italic: (inner) => `<i>${inner}</i>`,
  strike: (inner) => `<s>${inner}</s>`,
  code: (text) => `<code>${escapeTelegramHtml(text)}</code>`,
  block: (text, language) =>
    language
      ? `<pre><code class="language-${language}">${escapeTelegramHtml(text)}</code></pre>`
      : `<pre>${escapeTelegramHtml(text)}</pre>`,
  quote: (inner) => `<blockquote>${inner}</blockquote>`,
  link: (href, inner) => `<a href="${escapeTelegramHtml(href).replace(/"/g, '&quot;')}">${inner}</a>`,
};

/** Slack's three entities; `<…>` would otherwise be a mention, a channel link or a link. */
function escapeSlack(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const SLACK: Dialect = {
  text: escapeSlack,
  bold: (inner) => `*${inner}*`,
  italic: (inner) => `_${inner}_`,
  strike: (inner) => `~${inner}~`,
  code: (text) => `\`${escapeSlack(text)}\``,
  block: (text) => `\`\`\`\n${escapeSlack(text)}\n\`\`\``,
  quote: (inner) =>
    inner
      .split('\n')
      .map((line) => `> ${line}`)
      .join('\n'),
  // `|` and `>` end the target or the label of a Slack link.
  link: (href, inner) => `<${escapeSlack(href).replace(/\|/g, '%7C')}|${inner.replace(/\|/g, '¦')}>`,
};

/**
 * One part of a body as Telegram HTML for `parse_mode: HTML`: `<b>`, `<i>`, `<s>`, `<code>`,
 * `<pre>`, `<blockquote>` and `<a href>`, every other character escaped. The text Telegram shows
 * is never longer than `markdown` (markup characters are dropped, each escape counts as one).
 */
export function toTelegramHtml(markdown: string): string {
  return render(markdown, TELEGRAM);
}

/**
 * One part of a body as Slack mrkdwn: `*bold*`, `_italic_`, `~strike~`, `` `code` ``, fenced
 * blocks, `>` quotes and `<url|label>` links; `&`, `<` and `>` escaped everywhere else.
 */
export function toSlackMrkdwn(markdown: string): string {
  return render(markdown, SLACK);
}

/**
 * GitHub-flavoured Markdown without its bare-URL autolinks: every platform here links a URL in
 * text by itself, and an autolink would swallow the escapes of the text after it.
 */
const tokenizer = new Tokenizer();
tokenizer.url = () => undefined;

function render(markdown: string, dialect: Dialect): string {
  return blocks(Lexer.lex(markdown, { gfm: true, tokenizer }), dialect);
}

/** Block tokens, separated by as many line breaks as the source had between them. */
function blocks(tokens: readonly Token[], dialect: Dialect): string {
  let out = '';
  let pendingBreaks = 0;
  for (const token of tokens) {
    if (token.type === 'space') {
      pendingBreaks += newlines(token.raw);
      continue;
    }
    const rendered = block(token, dialect);
    if (out !== '') out += '\n'.repeat(Math.max(1, pendingBreaks));
    out += rendered;
    pendingBreaks = trailingNewlines(token.raw);
  }
  return out;
}

function block(token: Token, dialect: Dialect): string {
  switch (token.type) {
    case 'paragraph':
    case 'text':
      return 'tokens' in token && token.tokens ? inline(token.tokens, dialect) : dialect.text(token.text ?? token.raw);
    case 'heading':
      return dialect.bold(inline((token as Tokens.Heading).tokens, dialect));
    case 'code': {
      const code = token as Tokens.Code;
      const language = /^[A-Za-z0-9_+-]{1,20}$/.test(code.lang ?? '') ? code.lang! : '';
      // An indented block's text is its lines; a fenced block's is what is between the fences.
      return dialect.block(code.text.replace(/\n+$/, ''), language);
    }
    case 'blockquote':
      return dialect.quote(blocks((token as Tokens.Blockquote).tokens, dialect));
    case 'list':
      return list(token as Tokens.List, dialect);
    case 'hr':
      return '———';
    case 'table':
      // No platform here draws tables: the source, aligned as written, in a code block.
      return dialect.block(token.raw.replace(/\n+$/, ''), '');
    default:
      // Raw HTML, link definitions and anything unknown: shown as written.
      return dialect.text(token.raw.replace(/\n+$/, ''));
  }
}

function list(token: Tokens.List, dialect: Dialect): string {
  const start = typeof token.start === 'number' ? token.start : 1;
  return token.items
    .map((item, i) => {
      const marker = token.ordered ? `${start + i}. ` : '- ';
      const check = item.task ? (item.checked ? '☑ ' : '☐ ') : '';
      const [first, ...rest] = item.tokens.filter((t) => t.type !== 'checkbox');
      // The item's own text keeps its lines as written (a line after a list with no blank line
      // is that item's text in Markdown, yet reads as the next line); nested blocks are indented.
      const own = first ? blocks([first], dialect) : '';
      const nested =
        rest.length > 0
          ? `\n${' '.repeat(marker.length)}${blocks(rest, dialect).replace(/\n/g, `\n${' '.repeat(marker.length)}`)}`
          : '';
      return `${marker}${check}${own}${nested}`;
    })
    .join('\n');
}

function inline(tokens: readonly Token[], dialect: Dialect): string {
  return tokens.map((token) => inlineToken(token, dialect)).join('');
}

function inlineToken(token: Token, dialect: Dialect): string {
  switch (token.type) {
    case 'strong':
      return dialect.bold(inline((token as Tokens.Strong).tokens, dialect));
    case 'em':
      return dialect.italic(inline((token as Tokens.Em).tokens, dialect));
    case 'del':
      return dialect.strike(inline((token as Tokens.Del).tokens, dialect));
    case 'codespan':
      return dialect.code(decodeEntities((token as Tokens.Codespan).text));
    case 'br':
      return '\n';
    case 'link': {
      const link = token as Tokens.Link;
      const inner = inline(link.tokens, dialect);
      return SAFE_HREF.test(link.href) ? dialect.link(link.href, inner) : inner;
    }
    case 'image':
      return dialect.text((token as Tokens.Image).text || (token as Tokens.Image).href);
    case 'escape':
      return dialect.text(token.text);
    case 'text':
      return 'tokens' in token && token.tokens
        ? inline(token.tokens, dialect)
        : dialect.text(decodeEntities(token.text));
    default:
      // Raw inline HTML (`<b>`, `<br>`) and anything unknown: shown as written.
      return dialect.text(token.raw);
  }
}

/** Link targets kept as links; others (javascript:, tg:, relative paths) show as their text. */
const SAFE_HREF = /^(https?:\/\/|mailto:)[^\s]+$/i;

/**
 * marked hands inline text over with `&`, `<`, `>`, `"` and `'` already HTML-escaped (its lexer
 * prepares text for an HTML renderer); this gives back the characters the source held.
 */
function decodeEntities(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39);/g, (_whole, name: string) => ENTITIES[name]!);
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" };

function newlines(text: string): number {
  return (text.match(/\n/g) ?? []).length;
}

function trailingNewlines(text: string): number {
  return /\n*$/.exec(text)![0].length;
}

const PLAIN: Dialect = {
  text: (text) => text,
  bold: (inner) => inner,
  italic: (inner) => inner,
  strike: (inner) => inner,
  code: (text) => text,
  block: (text) => text,
  quote: (inner) =>
    inner
      .split('\n')
      .map((line) => `> ${line}`)
      .join('\n'),
  link: (href, inner) => (inner === href ? href : `${inner} (${href})`),
};

/** One body as plain text, for a terminal: the Markdown's words without its markup. */
export function toPlainText(markdown: string): string {
  return render(markdown, PLAIN);
}
