/**
 * A real browser for page tests: Debian's Chromium (`/usr/bin/chromium`, installed by .ci/run)
 * driven headless by playwright-core, in a fresh profile. Chromium's own background connections
 * are turned off: on a closed network they are refused and slow every start. Screenshots go to
 * `test-artifacts/` (gitignored), kept after the run as artifacts.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Where Debian installs Chromium. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** `test-artifacts/` at the top of the repository. */
export const ARTIFACTS_DIR = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));

/** A browser with one page. */
export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  /** Saves a full-page screenshot as `test-artifacts/<suite>/<name>.png`; resolves with its path. */
  screenshot(name: string): Promise<string>;
  close(): Promise<void>;
}

/** Launches Chromium headless; `suite` names the folder of its screenshots. */
export async function openBrowser(suite: string, viewport = { width: 1280, height: 900 }): Promise<TestBrowser> {
  const profile = await mkdtemp(join(tmpdir(), 'baton-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    viewport,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const shots = join(ARTIFACTS_DIR, suite);
  await mkdir(shots, { recursive: true });
  return {
    context,
    page,
    screenshot: async (name) => {
      const path = join(shots, `${name}.png`);
      await page.screenshot({ path, fullPage: true });
      return path;
    },
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
