/**
 * The configuration reference in docs/configuration.md, generated from the zod schema
 * ({@link CONFIG_KEYS}) so the two cannot drift: a test compares that page's block with
 * {@link renderConfigReference}.
 */
import { CONFIG_KEYS } from './schema.js';

/** Markers around the generated block in docs/configuration.md. */
export const REFERENCE_START =
  '<!-- config-reference:start (generated from src/config/schema.ts; `baton config-reference` prints it) -->';
export const REFERENCE_END = '<!-- config-reference:end -->';

/** The Markdown table of every `config.toml` key, with the markers. */
export function renderConfigReference(): string {
  const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const rows = CONFIG_KEYS.map(
    (k) =>
      `| \`[${k.section}]\` | \`${k.key}\` | ${cell(k.type)} | ${k.default === undefined ? '—' : `\`${cell(k.default)}\``} | ${cell(k.description)} |`,
  );
  return [
    REFERENCE_START,
    '| section | key | type | default | meaning |',
    '|---|---|---|---|---|',
    ...rows,
    REFERENCE_END,
  ].join('\n');
}
