/**
 * The user docs tell the truth: the configuration reference in docs/configuration.md is the one
 * generated from the schema, the reason table in docs/commands.md lists exactly the codes the
 * harness sets, and the README shows the two commands a newcomer needs.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REFERENCE_END, REFERENCE_START, renderConfigReference } from '../../src/config/reference.js';
import { CONFIG_KEYS } from '../../src/config/schema.js';
import { REASON_CODES } from '../../src/harness/outcome.js';

const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const readme = read('README.md');
const configuration = read('docs/configuration.md');
const commands = read('docs/commands.md');

describe('docs/configuration.md', () => {
  it('carries the configuration reference generated from the schema (run `node dist/cli/baton.js config-reference` to refresh it)', () => {
    const start = configuration.indexOf(REFERENCE_START);
    const end = configuration.indexOf(REFERENCE_END);
    expect(start).toBeGreaterThanOrEqual(0);
    expect(configuration.slice(start, end + REFERENCE_END.length)).toBe(renderConfigReference());
  });

  it('documents every config key', () => {
    for (const key of CONFIG_KEYS) expect(configuration).toContain(`\`${key.key}\``);
  });
});

describe('docs/commands.md', () => {
  it('lists every reason code in its reason table, and no code the harness does not set', () => {
    const at = commands.indexOf('| status · reason |');
    expect(at).toBeGreaterThanOrEqual(0);
    const table = commands.slice(at);
    const rows = table.slice(0, table.indexOf('\n\n')).split('\n').slice(2);
    const documented = rows.flatMap((row) => [...row.split('|')[1]!.matchAll(/· ([a-z_]+)`/g)].map((m) => m[1]));
    expect([...documented].sort()).toEqual([...REASON_CODES].sort());
  });
});

describe('README', () => {
  it('shows the two commands a newcomer needs', () => {
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toContain('npm test');
  });
});
