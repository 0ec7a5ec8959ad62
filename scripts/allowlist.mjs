/**
 * Shared by the lint checks: compares what a check found today with the file of known
 * offenders. Both directions fail, so the known list may only shrink: a finding that is not
 * listed is new, and a listed one that no longer occurs must be removed from the file.
 */
import { readFileSync } from 'node:fs';

/**
 * Reads a known-offenders file: a JSON array (entries are compared by `keyOf`).
 * @param {string} path
 * @returns {unknown[]}
 */
export function readKnown(path) {
  const parsed = JSON.parse(readFileSync(path, 'utf8'));
  if (!Array.isArray(parsed)) throw new Error(`${path}: expected a JSON array of known offenders`);
  return parsed;
}

/**
 * Prints what is new and what is stale; returns whether both lists are empty.
 * @param {{ name: string, knownPath: string, found: string[], known: string[] }} check
 *   `found` and `known` are keys of one shape (e.g. `file › function`).
 * @returns {boolean}
 */
export function compareWithKnown({ name, knownPath, found, known }) {
  const knownSet = new Set(known);
  const foundSet = new Set(found);
  const fresh = [...foundSet].filter((key) => !knownSet.has(key)).sort();
  const stale = [...knownSet].filter((key) => !foundSet.has(key)).sort();
  for (const key of fresh) console.error(`${name}: new violation: ${key}`);
  for (const key of stale) {
    console.error(`${name}: no longer occurs, remove it from ${knownPath}: ${key}`);
  }
  if (fresh.length === 0 && stale.length === 0) {
    console.log(`${name}: ok (${knownSet.size} known, may only shrink)`);
    return true;
  }
  return false;
}
