/** Prepared statements that survive a schema change under them (postgres.js). */
/**
 * A stand-in for a postgres.js client (the one `current()` returns at each call) whose `unsafe`
 * queries, the way drizzle sends every query, are prepared on the server: named statements that
 * postgres.js keeps per connection and reuses by their text.
 *
 * Why: drizzle 0.45 asks postgres.js not to prepare a query unless it was given a name
 * (`prepare: name !== undefined`, drizzle-orm/postgres-js/session.js), and postgres.js 3.4.9 sends
 * an unprepared query that has parameters in two turns: Parse + Describe, then, once the server
 * has described the parameter types, Bind + Execute; and nothing else goes out on that connection
 * in between, so queries meant to be pipelined waited for each other (src/connection.js `build`,
 * `describeFirst`). A prepared statement is described once per connection; after that each run of
 * it is one turn (Bind + Execute), and the server parses it no more (what that saved is in
 * docs/decisions/delivery-loop.md).
 *
 * The pool option still rules: `?prepare=false` in `DATABASE_URL` (or `PGPREPARE=false`) turns
 * statements off, for a pooler in transaction mode that cannot keep them (PgBouncer before 1.21).
 * Transactions and savepoints get the same stand-in, so their queries are prepared too.
 */
export function preparedStatements<T extends PostgresClient>(current: () => T): T {
  const prepared = (options: unknown): Record<string, unknown> => ({
    ...(options as Record<string, unknown> | undefined),
    prepare: true,
  });
  /** `fn` given a stand-in for the transaction client it is called with. */
  const wrapBody =
    (fn: (tx: PostgresClient) => unknown) =>
    (tx: PostgresClient): unknown =>
      fn(preparedStatements(() => tx));
  return new Proxy(current(), {
    get: (_target, key) => {
      const client = current();
      if (key === 'unsafe') {
        return (query: string, args?: unknown, options?: unknown) =>
          Array.isArray(args)
            ? client.unsafe(query, args as never, prepared(options) as never)
            : client.unsafe(query, prepared(args) as never);
      }
      if (key === 'begin' || key === 'savepoint') {
        // (fn) or (mode, fn): the body comes last.
        return async (...args: unknown[]) => {
          const body = args.pop() as (tx: PostgresClient) => unknown;
          const run = () => (client[key] as (...a: unknown[]) => Promise<unknown>)(...args, wrapBody(body));
          if (key === 'savepoint') return run();
          // A statement prepared before another connection changed the schema under it (a
          // migration by another process: "cached plan must not change result type") fails once
          // per connection. postgres.js retries it outside a transaction, but inside one its retry
          // meets the aborted transaction. The transaction was rolled back and postgres.js dropped
          // the stale statement: run it again (a few stale statements at most, one per try).
          for (let tries = 1; ; tries++) {
            try {
              return await run();
            } catch (err) {
              if (tries >= 4 || !staleStatement(err)) throw err;
            }
          }
        };
      }
      const value: unknown = Reflect.get(client, key);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(client) : value;
    },
    apply: (_target, thisArg, args) =>
      Reflect.apply(current() as unknown as (...a: unknown[]) => unknown, thisArg, args),
  }) as T;
}

/** Whether a failed query (or drizzle's wrapper of it) hit a prepared statement the schema outdated. */
function staleStatement(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const routine = (e as { routine?: unknown }).routine;
    if (routine === 'RevalidateCachedQuery' || routine === 'FetchPreparedStatement') return true;
  }
  return false;
}

/** What {@link preparedStatements} needs of a postgres.js client or transaction. */
export interface PostgresClient {
  unsafe(query: string, args?: never, options?: never): unknown;
  begin?: unknown;
  savepoint?: unknown;
}
