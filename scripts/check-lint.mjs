/**
 * Biome's linter over the tree as the formatter would leave it, against the known offenders in
 * .lint-known-violations.json: fails on a new finding and on a known one that no longer occurs
 * (remove it from the file; the list may only shrink). The linter runs on a formatted copy so that
 * the line limits (80 a function, 400 a file) measure formatted code whether or not the working
 * tree has been formatted yet; the working tree itself is never written.
 *
 * Keys: a long function is `file › Class.method` (or the named function it sits in), a long file
 * is the file, and `process.env` readers are the file with its number of reads, so a new read in
 * a listed file fails too.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { compareWithKnown, readKnown } from './allowlist.mjs';

const KNOWN = '.lint-known-violations.json';
const BIOME = join(process.cwd(), 'node_modules/@biomejs/biome/bin/biome');
const COPIED = ['src', 'test', 'scripts', 'biome.json', '.dependency-cruiser.cjs'];

/** Runs biome; a non-zero exit with a report is still a report. */
function biome(cwd, args) {
  try {
    return execFileSync(process.execPath, [BIOME, ...args], {
      cwd,
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    if (error.stdout && args.includes('--reporter=json')) return error.stdout;
    throw error;
  }
}

/** The name of the function that starts at a line and column: `Outer.inner`, anonymous ones by where they sit. */
function functionName(source, line, column) {
  const file = ts.createSourceFile('x.ts', source, ts.ScriptTarget.Latest, true);
  const position = file.getPositionOfLineAndCharacter(line - 1, column - 1);
  let best;
  const visit = (node) => {
    if (ts.isFunctionLike(node) && node.getStart(file) <= position && position < node.getEnd()) best = node;
    if (node.getStart(file) <= position && position < node.getEnd()) ts.forEachChild(node, visit);
  };
  ts.forEachChild(file, visit);
  if (!best) return `line ${line}`;
  const names = [];
  for (let node = best; node && !ts.isSourceFile(node); node = node.parent) {
    const named =
      node.name ??
      (ts.isVariableDeclaration(node.parent) ||
      ts.isPropertyAssignment(node.parent) ||
      ts.isPropertyDeclaration(node.parent)
        ? node.parent.name
        : undefined);
    if ((ts.isFunctionLike(node) || ts.isClassLike(node)) && named) names.unshift(named.getText(file));
    else if (node === best) names.unshift('(anonymous)');
  }
  return names.join('.');
}

/**
 * The files to copy: what git tracks plus what it does not ignore (so a bench run's leftovers or
 * an editor's backups are not linted); outside a checkout, everything under the copied entries.
 */
function lintedFiles() {
  let listed;
  try {
    listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', ...COPIED], {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    // Only "this is no checkout" (or no git at all) falls back to the plain folders.
    const noCheckout = error.code === 'ENOENT' || /not a git repository/.test(String(error.stderr));
    if (!noCheckout) throw error;
    listed = undefined;
  }
  if (listed === undefined) {
    return COPIED.flatMap((entry) =>
      statSync(entry).isDirectory()
        ? readdirSync(entry, { recursive: true, withFileTypes: true })
            .filter((dirent) => dirent.isFile())
            .map((dirent) => join(dirent.parentPath, dirent.name))
        : [entry],
    );
  }
  // A tracked file deleted in the working tree is still listed by git; it has nothing to lint.
  return listed.split('\0').filter((file) => file !== '' && existsSync(file));
}

const work = mkdtempSync(join(tmpdir(), 'baton-lint-'));
let diagnostics;
try {
  for (const file of lintedFiles()) cpSync(file, join(work, file));
  // Twice: Biome 2.6.9 settles a few long member chains only on its second pass.
  biome(work, ['format', '--vcs-enabled=false', '--write', '.']);
  biome(work, ['format', '--vcs-enabled=false', '--write', '.']);
  const report = JSON.parse(
    biome(work, ['lint', '--vcs-enabled=false', '--reporter=json', '--max-diagnostics=none', '.']),
  );
  diagnostics = report.diagnostics
    .filter((d) => d.severity === 'error' || d.severity === 'warning')
    .map((d) => ({ ...d, source: readFileSync(join(work, d.location.path), 'utf8') }));
} finally {
  rmSync(work, { recursive: true, force: true });
}

const found = [];
const envReads = new Map();
for (const d of diagnostics) {
  const file = d.location.path;
  const rule = d.category.replace(/^lint\/[^/]+\//, '');
  if (rule === 'noProcessEnv') envReads.set(file, (envReads.get(file) ?? 0) + 1);
  else if (rule === 'noExcessiveLinesPerFunction') {
    found.push(`${rule}: ${file} › ${functionName(d.source, d.location.start.line, d.location.start.column)}`);
  } else if (rule === 'noExcessiveLinesPerFile') found.push(`${rule}: ${file}`);
  else found.push(`${rule}: ${file}:${d.location.start.line} ${d.message}`);
}
for (const [file, count] of envReads) found.push(`noProcessEnv: ${file} (${count} reads)`);

// Two anonymous functions in one place get a number each, so both stay listed.
const seen = new Map();
const keys = found.map((key) => {
  const n = (seen.get(key) ?? 0) + 1;
  seen.set(key, n);
  return n === 1 ? key : `${key} #${n}`;
});

if (process.argv.includes('--print')) console.log(JSON.stringify(keys.sort(), null, 2));
else if (!compareWithKnown({ name: 'lint', knownPath: KNOWN, found: keys, known: readKnown(KNOWN) }))
  process.exitCode = 1;
