/**
 * A run's end starts queued runs (issue #17), but with none queued — the common case — the queue
 * pass must cost the next launch nothing (issue #15): before, every run's end re-read config.toml
 * and took the launch lock for a transaction of five round trips, which a launch arriving just
 * then waited behind. Now one lock-free lookup ends the pass. Shown here with the launch lock held
 * by another session: the pass still ends, without reading the config.
 *
 * PostgreSQL server only (a second session holding the advisory lock); skipped on PGlite.
 */
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAUNCH_LOCK_KEY } from '../../src/store/runs-repo.js';
import { testEngine } from '../support/database.js';
import { createHarness, dispatcherFor, type TestHarness } from '../support/harness.js';

describe.skipIf(testEngine !== 'postgres')('the queue pass at a run end with nothing queued', () => {
  let h: TestHarness;
  let other: postgres.Sql;
  beforeAll(async () => {
    h = await createHarness();
    other = postgres(h.database.url!, { max: 1, onnotice: () => {} });
  }, 60_000);
  afterAll(async () => {
    await other?.end({ timeout: 5 });
    await h?.dispose();
  });

  it('neither waits for the launch lock nor re-reads config.toml', async () => {
    let refreshes = 0;
    const live = {
      current: h.config,
      refresh: async () => {
        refreshes += 1;
      },
    };
    const dispatcher = dispatcherFor(h, {
      liveConfig: live,
    });
    await other.reserve().then(async (session) => {
      try {
        // Held by another session for the whole pass: a pass that took it would never end.
        await session`select pg_advisory_lock(${LAUNCH_LOCK_KEY})`;
        await dispatcher.startQueued();
        expect(refreshes).toBe(0);
        await session`select pg_advisory_unlock(${LAUNCH_LOCK_KEY})`;
      } finally {
        session.release();
      }
    });
  });
});
