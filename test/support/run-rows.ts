/**
 * Rows for store tests that need a run to hang deliveries on, inserted directly.
 */
import { newRunId, type RunId } from '../../src/core/ids.js';
import type { Db } from '../../src/store/database.js';
import * as schema from '../../src/store/schema.js';

/**
 * Inserts a completed codex run in `/r` whose origin is Telegram chat `chatId`.
 *
 * @returns the run's id.
 */
export async function insertCompletedRun(db: Db, chatId: string, now: Date): Promise<RunId> {
  const id = newRunId();
  await db.insert(schema.runs).values({
    id,
    vendor: 'codex',
    status: 'completed',
    task: 't',
    cwd: '/r',
    worktreeRoot: '/r',
    options: { timeoutMinutes: 30, progress: false },
    origin: { platform: 'telegram', chatId, senderId: chatId, messageId: '1' },
    supervisor: 'test:1',
    createdAt: now,
  });
  return id;
}
