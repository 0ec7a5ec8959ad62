/**
 * Faults of the PostgreSQL driver that escape every `await`.
 *
 * postgres.js 3.4.9 (the newest release on npm on 2026-11-30; same code on its master) throws
 * from a `setImmediate` callback when a connection is cut while a transaction is in flight:
 *
 * ```
 * TypeError: Cannot read properties of null (reading 'write')
 *     at Immediate.nextWrite (node_modules/postgres/src/connection.js:255:22)
 * ```
 *
 * How, in `src/connection.js`: `write()` buffers a message under 1024 bytes in `chunk` and
 * schedules `nextWrite` with `setImmediate` only while `nextWriteTimer === null`. On a socket
 * close, `closed()` sets `socket = null` and calls `clearImmediate(nextWriteTimer)` but leaves
 * `nextWriteTimer` and `chunk` as they were. `begin()`'s scope keeps the connection it reserved:
 * when a query in the transaction fails because the connection closed, the scope sends
 * `rollback` on that same, now socketless, connection (`c.execute(q)`, which checks neither the
 * socket nor the connection's state). Two outcomes, both reproduced through a TCP proxy that
 * resets the connections (test/fakes/tcp-proxy.ts, ~1 in 20 cuts of a busy pool):
 * - `nextWriteTimer` was null: a fresh immediate runs `socket.write` on null and the TypeError
 *   reaches `uncaughtException`, which by default ends the process with exit code 1;
 * - `nextWriteTimer` was stale (also after the TypeError above, which is thrown before the reset):
 *   nothing is scheduled, the `rollback` never settles, and the connection never flushes again
 *   (its next StartupMessage is buffered too), so it fails every query it gets with
 *   CONNECT_TIMEOUT after `connect_timeout`. Measured through the proxy: after one fault, 12
 *   concurrent queries on a pool of 10 gave 11 ok and 1 CONNECT_TIMEOUT after 10 s, round after
 *   round; a polite close (FIN) of a connection parked in a transaction throws every time, a
 *   reset (RST) did not in 2 of 2 tries.
 * Upstream: porsager/postgres issues #1066, #1154, #1208 and pull requests #1168, #1176 (a
 * `if (!socket) return` guard in `nextWrite`); none is released. The complete fix also nulls
 * `nextWriteTimer` and `chunk` in `closed()` and `terminate()`, and makes `execute()` reject on a
 * closed connection.
 *
 * baton does not patch the installed driver: `baton start` keeps running past these faults
 * (see {@link isDriverFault}) and replaces the whole pool (`Database.recycle()`; measured after
 * it: 12 of 12 ok, three rounds), its run-end write times out and retries on another connection
 * (`src/harness/terminal-write.ts`), and the pool reconnects on its own after an outage.
 */

/** A stack frame inside the postgres.js package (its ESM `src/` or CommonJS `cjs/src/` build). */
const DRIVER_FRAME = /[\\/]node_modules[\\/]postgres[\\/](?:cjs[\\/])?src[\\/][a-z]+\.js:\d+/;

/**
 * Whether an uncaught exception was thrown by postgres.js itself: its innermost stack frame is in
 * the driver's own files. Such a fault ends one connection, not the service; anything else
 * uncaught is a bug of baton's and still ends the process.
 */
export function isDriverFault(err: unknown): boolean {
  if (!(err instanceof Error) || typeof err.stack !== 'string') return false;
  const firstFrame = err.stack.split('\n').find((line) => line.trimStart().startsWith('at '));
  return firstFrame !== undefined && DRIVER_FRAME.test(firstFrame);
}
