/**
 * The import rules of .dependency-cruiser.cjs over src/, against the known violations in
 * .dependency-cruiser-known-violations.json: fails on a new violation and on a known one that
 * no longer occurs (remove it from the file; the list may only shrink).
 */
import { execFileSync } from 'node:child_process';
import { compareWithKnown, readKnown } from './allowlist.mjs';

const KNOWN = '.dependency-cruiser-known-violations.json';

/** One key per violation: the rule, and the edge or the cycle it is about. */
function keyOf(violation) {
  const cycle = (violation.cycle ?? []).map((step) => (typeof step === 'string' ? step : step.name));
  const where =
    violation.type === 'cycle' ? [violation.from, ...cycle].join(' → ') : `${violation.from} → ${violation.to}`;
  return `${violation.rule.name}: ${where}`;
}

const CRUISE = [
  'node_modules/dependency-cruiser/bin/dependency-cruise.mjs',
  'src',
  '--config',
  '.dependency-cruiser.cjs',
];
let output;
try {
  output = execFileSync(process.execPath, [...CRUISE, '--output-type', 'json'], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
} catch (error) {
  // A non-zero exit with a report on stdout is still a report; without one the cruise itself failed.
  if (!error.stdout) throw error;
  output = error.stdout;
}
const found = JSON.parse(output).summary.violations.map(keyOf);
const known = readKnown(KNOWN).map(keyOf);
if (!compareWithKnown({ name: 'layering', knownPath: KNOWN, found, known })) process.exitCode = 1;
