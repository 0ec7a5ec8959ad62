/**
 * Deciding code never compares platform or vendor names: what a channel can do comes from its
 * adapter's abilities, what a CLI can do from its vendor facts. This check reads every file under
 * the deciding folders with the TypeScript parser and fails on a comparison (`===`, `!==`, `==`,
 * `!=`), a `case` label or an `.includes(…)` argument that is one of those names as a string
 * literal. Maps keyed by a name (a command's vendor) are not comparisons and pass.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/** The folders whose code decides and so must not branch on a name; the arguments replace them. */
const DECIDING_FOLDERS = process.argv.length > 2 ? process.argv.slice(2) : ['src/dispatch'];
const NAMES = new Set(['telegram', 'slack', 'discord', 'terminal', 'codex', 'claude']);
const EQUALITY = new Set([
  ts.SyntaxKind.EqualsEqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsEqualsToken,
  ts.SyntaxKind.EqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsToken,
]);

/** Every `.ts` file below `folder`. */
function sourceFiles(folder) {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** The name a node spells, when it is a string literal naming a platform or a vendor. */
function nameLiteral(node) {
  return (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && NAMES.has(node.text)
    ? node.text
    : undefined;
}

/** `file:line: what` for each comparison against a name in one file. */
function findingsOf(path) {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const findings = [];
  const report = (node, what) => {
    const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
    findings.push(`${relative(process.cwd(), path)}:${line + 1}: ${what}`);
  };
  const visit = (node) => {
    if (ts.isBinaryExpression(node) && EQUALITY.has(node.operatorToken.kind)) {
      const name = nameLiteral(node.left) ?? nameLiteral(node.right);
      if (name) report(node, `compares with '${name}'`);
    } else if (ts.isCaseClause(node)) {
      const name = nameLiteral(node.expression);
      if (name) report(node, `case '${name}'`);
    } else if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.name.text === 'includes'
    ) {
      const target = node.expression.expression;
      const listed = ts.isArrayLiteralExpression(target) ? target.elements.map(nameLiteral).find(Boolean) : undefined;
      const name = listed ?? node.arguments.map(nameLiteral).find(Boolean);
      if (name) report(node, `includes '${name}'`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return findings;
}

const findings = DECIDING_FOLDERS.flatMap(sourceFiles).flatMap(findingsOf);
if (findings.length > 0) {
  console.error(
    `names: ${findings.length} comparison(s) with a platform or vendor name in deciding code; ` +
      'ask the adapter (PLATFORM_ABILITIES) or the vendor facts (VENDOR_FACTS) instead:',
  );
  for (const finding of findings) console.error(`  ${finding}`);
  process.exitCode = 1;
} else {
  console.log(`names: no platform or vendor name compared under ${DECIDING_FOLDERS.join(', ')}`);
}
