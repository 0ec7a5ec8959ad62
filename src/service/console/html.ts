/**
 * HTML built with escaping by default: every value put into an {@link html} template is escaped
 * unless it is itself {@link Html} (made by this module). Text from a repository, a chat message,
 * a command's output or a DB row another node wrote is untrusted; this is the one place it
 * becomes markup.
 */

/** Markup that is already safe to send. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/** `text` with `& < > " '` replaced by their character references. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** A value a template takes: escaped text, markup, or a list of either; null and undefined add nothing. */
export type HtmlValue = string | number | Html | null | undefined | false | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map((v: HtmlValue) => render(v)).join('');
  return escapeHtml(String(value));
}

/** Tagged template: `html\`<p>${untrusted}</p>\`` escapes `untrusted`. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i += 1) out += render(values[i]) + (strings[i + 1] ?? '');
  return new Html(out);
}
