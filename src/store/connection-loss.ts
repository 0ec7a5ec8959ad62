/**
 * Which database errors mean "the connection went away", as opposed to "the statement is wrong".
 *
 * A statement that failed because its connection was lost may be tried again on a fresh one;
 * anything else (a constraint, a syntax error, a missing table) fails the same way every time.
 */

/**
 * Error codes of postgres.js 3.4.9 for a connection that ended under a query (its `src/errors.js`
 * and `src/connection.js`: `CONNECTION_CLOSED` when the server or the network closed it,
 * `CONNECTION_ENDED` / `CONNECTION_DESTROYED` when the pool was ended or destroyed,
 * `CONNECT_TIMEOUT` when a new connection did not open in `connect_timeout`).
 */
const DRIVER_CODES = new Set(['CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT']);

/** Socket errors of Node for a peer that went away or cannot be reached. */
const SOCKET_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
]);

/**
 * SQLSTATEs of PostgreSQL that end a session (PostgreSQL 18 manual, Appendix A): class 08
 * (connection exception), 57P01 admin_shutdown (`pg_terminate_backend`, a fast shutdown), 57P02
 * crash_shutdown, 57P03 cannot_connect_now (starting up or in recovery), 57P05
 * idle_session_timeout.
 */
const SESSION_ENDED_STATES = /^(08[0-9A-Z]{3}|57P0[1235])$/;

/** How deep {@link isConnectionLoss} follows `cause` (drizzle wraps driver errors once). */
const MAX_CAUSE_DEPTH = 5;

/**
 * Whether `err` (or an error in its `cause` chain, e.g. the postgres.js error inside drizzle's
 * `DrizzleQueryError`) says the database connection was lost rather than that the statement
 * failed: a postgres.js connection code, a socket error code, or a session-ending SQLSTATE.
 * Never throws.
 */
export function isConnectionLoss(err: unknown): boolean {
  let current: unknown = err;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && current !== null && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (
      typeof code === 'string' &&
      (DRIVER_CODES.has(code) || SOCKET_CODES.has(code) || SESSION_ENDED_STATES.test(code))
    )
      return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
