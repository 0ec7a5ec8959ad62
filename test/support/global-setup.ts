/**
 * vitest globalSetup (named in test/vitest.config.ts): installs the pinned vendor CLIs once per
 * `vitest run`, before any test file starts, and hands their location to the tests.
 *
 * Tests read the location with `inject('codexBinDir')`; code that only sees the environment
 * (a spawned service, a helper run outside vitest's context) reads
 * `process.env.BATON_TEST_CODEX_BIN_DIR`, which workers inherit because they are forked after
 * this setup ran.
 */
import type { TestProject } from 'vitest/node';
import { ensureClaudeCli, ensureCodexCli } from './vendor-clis.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Directory holding the pinned `codex` launcher; put it first on a spawned CLI's PATH. */
    codexBinDir: string;
    /** The pinned codex version, e.g. `0.171.0`. */
    codexVersion: string;
    /** Directory holding the pinned `claude` launcher. */
    claudeBinDir: string;
    /** The pinned claude version, e.g. `2.1.332`. */
    claudeVersion: string;
  }
}

/** Installs the CLIs when missing (once per machine) or checks them (~150 ms each). */
export default async function setup(project: TestProject): Promise<void> {
  const [codex, claude] = await Promise.all([ensureCodexCli(), ensureClaudeCli()]);
  project.provide('claudeBinDir', claude.binDir);
  project.provide('claudeVersion', claude.version);
  process.env['BATON_TEST_CLAUDE_BIN_DIR'] = claude.binDir;
  project.provide('codexBinDir', codex.binDir);
  project.provide('codexVersion', codex.version);
  process.env['BATON_TEST_CODEX_BIN_DIR'] = codex.binDir;
}
