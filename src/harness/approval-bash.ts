/**
 * What an "Allow for this run" of one Bash command covers. A rule covers later commands of the
 * same program and subcommand (`git tag`, `npm test`, `npm run build`, `ls`) when the program is
 * one baton knows and the later command has no option or argument that names code to run (git
 * `-c`, `--upload-pack`, `--exec`; `find -exec`, `-delete`; npm `--script-shell`…) or a path
 * outside the project. Anything else — another program, shell syntax, a quote baton does not
 * read, a non-ASCII character — covers only the identical command.
 */
import { PROGRAMS, type ProgramRule } from './approval-bash-programs.js';
import { simpleWords } from './approval-bash-words.js';

/** A tilde prefix other than the home's own: `~user`, `~+`, `~-`, also after `=` or `:`. */
const OTHER_TILDE = /(^|[=:])~(?![/=:]|$)/;

/** What one Bash command may be covered as, before its paths are judged. */
export type BashReading =
  /** Covered with the same `kind`; `paths` must all be in the project. */
  | { covered: true; kind: string; paths: string[] }
  /** Only the identical command. */
  | { covered: false };

function isDenied(option: string, rule: ProgramRule, sub: string | undefined): boolean {
  const extra = sub ? rule.perSubcommand?.[sub] : undefined;
  const long = [...rule.deniedLong, ...(extra?.deniedLong ?? [])];
  const short = (rule.deniedShort ?? '') + (extra?.deniedShort ?? '');
  // npm's option parser (nopt) reads `-node-options=…` as the long option, not as letters.
  if (
    rule.singleDashLong &&
    !option.startsWith('--') &&
    option.length > 2 &&
    long.some((denied) => option.slice(1).split('=')[0]! === denied)
  )
    return true;
  if (rule.style === 'single' || option.startsWith('--')) {
    const name = option.replace(/^--?/, '').split('=')[0]!;
    if (name === '') return false;
    // GNU getopt and git's parse-options take any unambiguous prefix of a long option.
    return long.some(
      (denied) => denied === name || (rule.style === 'gnu' && option.startsWith('--') && denied.startsWith(name)),
    );
  }
  // A short cluster: `-abc`; a value may follow a letter (`-mfix`), so every letter counts.
  return [...option.slice(1)].some((letter) => short.includes(letter));
}

/**
 * Reads a command for "Allow for this run": the program, its subcommand, and the words that may
 * be paths (every argument, and an option's value after `=` or its letters).
 */
export function readBash(command: string): BashReading {
  const words = simpleWords(command);
  if (!words) return { covered: false };
  const [program, ...rest] = words as [string, ...string[]];
  const rule = Object.hasOwn(PROGRAMS, program) ? PROGRAMS[program] : undefined;
  if (!rule) return { covered: false };
  let i = 0;
  let sub: string | undefined;
  const kind = [program];
  if (rule.subcommands) {
    while (i < rest.length && rest[i]!.startsWith('-')) {
      if (!rule.globals?.has(rest[i]!)) return { covered: false };
      i += 1;
    }
    sub = rest[i];
    if (sub === undefined || !rule.subcommands.has(sub)) return { covered: false };
    kind.push(sub);
    i += 1;
    if (rule.named?.has(sub)) {
      const name = rest[i];
      if (name === undefined || name.startsWith('-')) return { covered: false };
      kind.push(name);
      i += 1;
    }
  }
  const paths: string[] = [];
  let operands = false;
  for (const word of rest.slice(i)) {
    if (!operands && word === '--') {
      if (!rule.dashDashKeepsOptions) operands = true;
      continue;
    }
    // Bash expands `~user`, `~+` and `~-` (at a word's start, and after `=` or `:`) to other
    // directories than the word says; only `~` and `~/…` are judged as the home's paths.
    if (OTHER_TILDE.test(word)) return { covered: false };
    if (!operands && word.startsWith('-') && word !== '-') {
      if (isDenied(word, rule, sub)) return { covered: false };
      // An option's value may be a path: after `=`, or after a short option's letter (`-t/etc`).
      const value = word.includes('=')
        ? word.slice(word.indexOf('=') + 1)
        : rule.style === 'gnu' && !word.startsWith('--')
          ? word.slice(2)
          : '';
      if (value !== '') paths.push(value);
      continue;
    }
    if (sub && rule.bare?.has(sub)) return { covered: false };
    if (rule.deniedArgument?.(word)) return { covered: false };
    paths.push(word);
  }
  return { covered: true, kind: kind.join(' '), paths };
}
