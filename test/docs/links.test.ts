/**
 * The user docs hold together: every relative link in README.md and docs/**\/*.md names a file
 * that exists, every `#anchor` names a heading of its target as GitHub slugs it, and the README
 * stays a front page (at most 250 lines), with the rest in docs/.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Lexer, type Token, type Tokens } from 'marked';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const README_MAX_LINES = 250;

/** Every Markdown file under `dir`, as absolute paths. */
function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

/** The plain text of inline tokens, as GitHub reads a heading before slugging it. */
function plainText(tokens: Token[] | undefined, raw: string): string {
  if (!tokens) return raw;
  return tokens
    .map((token) => {
      if ('tokens' in token && Array.isArray(token.tokens)) return plainText(token.tokens, token.raw);
      return 'text' in token && typeof token.text === 'string' ? token.text : token.raw;
    })
    .join('');
}

/**
 * GitHub's heading anchor: lower case, every character that is not a letter, mark, digit,
 * connector, space or hyphen removed, each space a hyphen; a repeated slug gets `-1`, `-2`, ….
 */
export function githubSlug(text: string, seen: Map<string, number>): string {
  const base = text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
  const count = seen.get(base) ?? 0;
  seen.set(base, count + 1);
  return count === 0 ? base : `${base}-${count}`;
}

interface Parsed {
  anchors: Set<string>;
  links: string[];
}

/** The heading anchors and link targets of one Markdown text (code blocks and spans excluded). */
export function parseMarkdown(markdown: string): Parsed {
  const anchors = new Set<string>();
  const links: string[] = [];
  const seen = new Map<string, number>();
  const walk = (tokens: Token[]): void => {
    for (const token of tokens) {
      if (token.type === 'heading') {
        const heading = token as Tokens.Heading;
        anchors.add(githubSlug(plainText(heading.tokens, heading.text), seen));
      }
      if (token.type === 'link') links.push((token as Tokens.Link).href);
      if (token.type === 'table') {
        const table = token as Tokens.Table;
        for (const cell of [...table.header, ...table.rows.flat()]) walk(cell.tokens);
      }
      if (token.type === 'list') for (const item of (token as Tokens.List).items) walk(item.tokens);
      if ('tokens' in token && Array.isArray(token.tokens)) walk(token.tokens);
    }
  };
  walk(new Lexer({ gfm: true }).lex(markdown));
  return { anchors, links };
}

/** Where {@link brokenLinks} reads pages; a test swaps in pages that are not on disk. */
interface Pages {
  exists(path: string): boolean;
  read(path: string): string;
}

const DISK: Pages = { exists: existsSync, read: (path) => readFileSync(path, 'utf8') };

/** The broken links of `file`, each as `link: why`. */
export function brokenLinks(file: string, pages: Pages = DISK): string[] {
  const broken: string[] = [];
  for (const link of parseMarkdown(pages.read(file)).links) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto: — not this repository's
    const hash = link.indexOf('#');
    const pathPart = decodeURI(hash === -1 ? link : link.slice(0, hash));
    const anchor = hash === -1 ? undefined : decodeURIComponent(link.slice(hash + 1));
    const target = pathPart === '' ? file : resolve(dirname(file), pathPart);
    if (!pages.exists(target)) {
      broken.push(`${link}: no file ${relative(ROOT, target)}`);
      continue;
    }
    if (anchor === undefined) continue;
    if (!target.endsWith('.md') || (pages === DISK && !statSync(target).isFile())) {
      broken.push(`${link}: an anchor into ${relative(ROOT, target)}, which is not a Markdown file`);
      continue;
    }
    if (!parseMarkdown(pages.read(target)).anchors.has(anchor)) {
      broken.push(`${link}: no heading #${anchor} in ${relative(ROOT, target)}`);
    }
  }
  return broken;
}

const files = [join(ROOT, 'README.md'), ...markdownFiles(join(ROOT, 'docs'))];

describe('docs links', () => {
  it('finds the README and the docs pages', () => {
    expect(files.length).toBeGreaterThan(5);
  });

  it.each(files.map((file) => [relative(ROOT, file), file]))(
    'every relative link and anchor in %s resolves',
    (_name, file) => {
      expect(brokenLinks(file)).toEqual([]);
    },
  );

  it('reports a missing file, a missing heading and a heading slugged wrongly', () => {
    const page = join(ROOT, 'docs', 'probe.md');
    const pages: Record<string, string> = {
      [page]: [
        '# Probe',
        "## Why claude's `target` is missed (codex)",
        '## Repeat',
        '## Repeat',
        '[ok](#why-claudes-target-is-missed-codex) [ok](#repeat-1) [ok](commands.md#reason-codes)',
        '[bad](#why-claude-s-target) [bad](#repeat-2) [bad](no-such-page.md) [bad](commands.md#no-such-heading)',
        '`[not a link](nowhere.md)` [external](https://example.com/x.md)',
      ].join('\n\n'),
    };
    const probe: Pages = {
      exists: (path) => path in pages || existsSync(path),
      read: (path) => pages[path] ?? readFileSync(path, 'utf8'),
    };
    expect(brokenLinks(page, probe)).toEqual([
      '#why-claude-s-target: no heading #why-claude-s-target in docs/probe.md',
      '#repeat-2: no heading #repeat-2 in docs/probe.md',
      'no-such-page.md: no file docs/no-such-page.md',
      'commands.md#no-such-heading: no heading #no-such-heading in docs/commands.md',
    ]);
  });

  it(`keeps README.md at most ${README_MAX_LINES} lines`, () => {
    const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n');
    if (lines.at(-1) === '') lines.pop();
    expect(lines.length).toBeLessThanOrEqual(README_MAX_LINES);
  });
});
