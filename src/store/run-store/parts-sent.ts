/**
 * The batched write of sent delivery parts (see `OutboxRepo.recordPartsSent`): one statement
 * for any number of rows.
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../database.js';

/**
 * The statement of `OutboxRepo.writePartsSent` for `batch` (no delivery twice), on `db` or a
 * transaction of it.
 */
export async function partsSentStatement(db: Pick<Db, 'execute'>, batch: readonly PartsSent[]): Promise<boolean[]> {
  const result = await db.execute<{ later_pending: boolean }>(sql`
    with input as (
      select * from jsonb_to_recordset(${JSON.stringify(batch.map((b, ord) => ({ ...b, ord })))}::jsonb)
        as i(ord int, id bigint, parts int, ids jsonb, done boolean, at timestamptz, run_id text, platform text, chat_id text)
    ), updated as (
      update deliveries d set
        parts_delivered = i.parts,
        platform_message_ids = d.platform_message_ids || i.ids,
        status = case when i.done then 'delivered'::delivery_status else d.status end,
        delivered_at = case when i.done then i.at else d.delivered_at end
      from input i where d.id = i.id
      returning d.id
    ), linked as (
      insert into run_messages (platform, chat_id, message_id, run_id)
      select i.platform, i.chat_id, m.message_id, i.run_id
      from input i cross join lateral jsonb_array_elements_text(i.ids) as m(message_id)
      where i.run_id is not null
      on conflict do nothing
    )
    select i.done and i.run_id is not null
           and exists (select 1 from deliveries later where later.run_id = i.run_id and later.id > i.id and later.status = 'pending') as later_pending
    from input i order by i.ord`);
  const rows = (Array.isArray(result) ? result : (result as { rows: { later_pending: boolean }[] }).rows) as {
    later_pending: boolean;
  }[];
  return rows.map((row) => row.later_pending === true);
}

/** One row's write of `OutboxRepo.recordPartsSent`, as the batch statement reads it (JSON). */
export interface PartsSent {
  id: number;
  /** The row's new parts_delivered. */
  parts: number;
  /** Platform message ids of the parts just sent. */
  ids: string[];
  done: boolean;
  /** When the row was delivered (ISO 8601), used when `done`. */
  at: string;
  run_id: string | null;
  platform: string;
  chat_id: string;
}

/**
 * True when `err` (or its cause, as drizzle wraps driver errors) is an error the server raised
 * about a row's data: SQLSTATE class 22 (data exception) or 23 (integrity constraint violation,
 * such as a run deleted under its delivery); or a deadlock (40P01) or serialization failure
 * (40001), which a batch can meet where its rows alone would not (it locks several delivery rows
 * at once). The statement was then rolled back and wrote nothing. Not 40003 (completion unknown).
 */
export function isStatementError(err: unknown): boolean {
  for (let current: unknown = err, depth = 0; current && depth < 4; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && (/^2[23][0-9A-Z]{3}$/.test(code) || code === '40P01' || code === '40001'))
      return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
