import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const root = fileURLToPath(new URL('..', import.meta.url));

export default defineConfig({
  root,
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/git-host.ts'],
    // A hang guard, not a speed bound: a loaded 2-core machine runs a real CLI or opens PGlite
    // many times slower than an idle one (seen: 23 s for one `baton ask` at load 10). Helpers
    // wait for conditions, never for time, and stop what they started when a test ends.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // Two cores: E2E files spawn a service, a CLI and fakes each; more workers only thrash.
    maxWorkers: 2,
  },
});
