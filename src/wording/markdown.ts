/**
 * Markdown building blocks for the texts baton writes: outside text made literal, inline code and
 * fenced blocks. The delivery renderers turn the resulting Markdown into each platform's format.
 */

/**
 * Text from outside (a path, an error message, a task) made literal inside a Markdown body:
 * backslashes before what would format, link or quote (`*`, `` ` ``, `~`, `|`, `[`, `]`, `<`,
 * `>`, `&`, `\`, `_` at a word's edge) and before a line's list, heading or quote marker; a
 * line's indentation is cut to three spaces (four would make it code). Every renderer here, and
 * Discord, then shows the text as it was.
 */
export function escapeMarkdown(text: string): string {
  return (
    text
      // Four spaces (or a tab) before a line would make it a code block: keep three.
      .replace(/^[ \t]{4,}|^\t+/gm, '   ')
      .replace(/[\\`*~|[\]<>&]/g, '\\$&')
      .replace(/(^|[^A-Za-z0-9])_|_(?=[^A-Za-z0-9]|$)/g, (match) => match.replace('_', '\\_'))
      .replace(/^(\s*)([-+#=])/gm, '$1\\$2')
      .replace(/^(\s*\d+)([.)])/gm, '$1\\$2')
  );
}

/** `text` as inline code: literal everywhere; a backtick in it widens the fence (CommonMark). */
export function codeSpan(text: string): string {
  const oneLine = text.replace(/\n/g, ' ');
  const longest = Math.max(0, ...(oneLine.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  return longest === 0 ? `${fence}${oneLine}${fence}` : `${fence} ${oneLine} ${fence}`;
}

/** `text` as a fenced code block, the fence longer than any run of backticks in it. */
export function codeBlock(text: string, language = ''): string {
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${language}\n${text.replace(/\n+$/, '')}\n${fence}`;
}
