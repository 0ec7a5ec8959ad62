/**
 * The README tells the truth: its configuration reference is the one generated from the schema,
 * and every command it shows exists.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REFERENCE_END, REFERENCE_START, renderConfigReference } from '../../src/config/reference.js';
import { CONFIG_KEYS } from '../../src/config/schema.js';
import { REASON_CODES } from '../../src/harness/outcome.js';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('README', () => {
  it('carries the configuration reference generated from the schema (run `node dist/cli/baton.js config-reference` to refresh it)', () => {
    const start = readme.indexOf(REFERENCE_START);
    const end = readme.indexOf(REFERENCE_END);
    expect(start).toBeGreaterThanOrEqual(0);
    expect(readme.slice(start, end + REFERENCE_END.length)).toBe(renderConfigReference());
  });

  it('documents every config key', () => {
    for (const key of CONFIG_KEYS) expect(readme).toContain(`\`${key.key}\``);
  });

  it('lists every reason code in its reason table, and no code the harness does not set', () => {
    const table = readme.slice(readme.indexOf('| status · reason |'));
    const rows = table.slice(0, table.indexOf('\n\n')).split('\n').slice(2);
    const documented = rows.flatMap((row) => [...row.split('|')[1]!.matchAll(/· ([a-z_]+)`/g)].map((m) => m[1]));
    expect([...documented].sort()).toEqual([...REASON_CODES].sort());
  });

  it('shows the two commands a newcomer needs', () => {
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toContain('npm test');
  });
});
