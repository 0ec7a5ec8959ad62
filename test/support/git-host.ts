/**
 * Test setup: git runs with this process's PATH and HOME, as it does under `main`. The live
 * `process.env`, so a test that moves HOME or PATH moves git with it.
 */
import { useGitHost } from '../../src/harness/git-host.js';

useGitHost(process.env);
