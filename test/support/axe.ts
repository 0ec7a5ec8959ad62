/**
 * An accessibility scan of a page with axe-core (the pinned package), run inside the page:
 * WCAG 2 A and AA rules, which cover form labels, colour contrast and keyboard access. Injected
 * through the DevTools protocol, so the page's own Content-Security-Policy stays as served.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const require = createRequire(import.meta.url);

/** The rules that failed on `page`, as `rule: first offending element`. */
export async function axeViolations(page: Page): Promise<string[]> {
  const source = await readFile(require.resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(source);
  // A string, evaluated in the page: the tests are typed without the DOM library.
  return page.evaluate(`axe
    .run({ runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa'] } })
    .then((r) => r.violations.map((v) => v.id + ': ' + JSON.stringify(v.nodes[0] ? v.nodes[0].target : [])))`) as Promise<
    string[]
  >;
}
