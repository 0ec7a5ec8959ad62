/**
 * Start-up and service survive a server that drops idle connections (issue #10 item 9): with
 * `idle_session_timeout` on the database, PostgreSQL closes every connection idle for longer, as
 * managed PostgreSQL services and poolers do. It once made 1 of 3 starts exit with ECONNRESET.
 * Three starts must reach `baton ready`, and after idling past the timeout the service's own
 * pool must still answer (`GET /health/ready` queries the database).
 */
import postgres from 'postgres';
import { describe, expect, inject, it } from 'vitest';
import { readServiceState } from '../../src/service/control-api/service-state.js';
import { makeTestHome } from '../support/home.js';
import { startService } from '../support/service.js';

const onPostgres = Boolean(process.env.DATABASE_URL);
/** Shorter than any pause of baton's start-up (the CLIs' `--version` alone takes longer). */
const IDLE_SESSION_TIMEOUT_MS = 300;

describe.skipIf(!onPostgres)('a database that drops idle connections', () => {
  it('lets three starts reach ready, and the service answers after idling past it', async () => {
    for (let start = 1; start <= 3; start++) {
      const home = await makeTestHome('baton-idle-', [inject('codexBinDir'), inject('claudeBinDir')]);
      try {
        const admin = postgres(home.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
        await admin.unsafe(
          `alter database "${new URL(home.env.DATABASE_URL!).pathname.slice(1)}" set idle_session_timeout = ${IDLE_SESSION_TIMEOUT_MS}`,
        );
        await admin.end();
        const service = await startService(home.env);
        try {
          expect(service.stdout(), `start ${start}`).toContain('baton ready');
          const state = await readServiceState(home.batonHome);
          // Idle well past the timeout: every pooled connection is closed by the server.
          await new Promise((r) => setTimeout(r, IDLE_SESSION_TIMEOUT_MS * 6));
          const ready = await fetch(`http://127.0.0.1:${state!.port}/health/ready`);
          const body = (await ready.json()) as { rows: { area: string; status: string }[] };
          expect(['ok', 'warn'], `start ${start}`).toContain(body.rows.find((row) => row.area === 'database')?.status);
          expect(service.exitCode()).toBeUndefined();
        } finally {
          await service.stop();
        }
      } finally {
        await home.dispose();
      }
    }
  }, 300_000);
});
