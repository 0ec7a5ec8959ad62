/** Splitting a Bash command into its words, when it is a simple command baton can read. */

/**
 * The words of a simple command, or undefined when it is more than words: shell syntax that
 * chains, redirects, substitutes, expands or globs (`; & | < > $ \` ( ) { } * ? [ ] # \`), a
 * quote left open, or any character outside printable ASCII besides space and tab (bash splits
 * words on space and tab only; a look-alike letter names another program). Single and double
 * quotes are read (their contents are literal here, as `$`, backquote and backslash are refused).
 */
export function simpleWords(command: string): string[] | undefined {
  if (/[^\x20-\x7e\t]/.test(command) || /[$`\\]/.test(command)) return undefined;
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < command.length; i += 1) {
    const char = command[i]!;
    if (char === ' ' || char === '\t') {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (char === "'" || char === '"') {
      const end = command.indexOf(char, i + 1);
      if (end < 0) return undefined;
      word = (word ?? '') + command.slice(i + 1, end);
      i = end;
    } else if (/[;&|<>(){}*?[\]#!]/.test(char)) {
      return undefined;
    } else {
      word = (word ?? '') + char;
    }
  }
  if (word !== undefined) words.push(word);
  return words.length > 0 ? words : undefined;
}
