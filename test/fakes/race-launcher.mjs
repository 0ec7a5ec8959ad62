#!/usr/bin/env node
// One "service process" of the lock-race test: opens the database named by argv[2] through the
// built store and tries argv[4] concurrent launches into the worktree argv[3] (or, when it ends
// with `*`, into a distinct worktree each) with max_active argv[5]. Prints one JSON line: how
// many it won and the error codes of the rest.
import { hostname } from 'node:os';
import { openDatabase } from '../../dist/store/database.js';
import { RunStore } from '../../dist/store/runs-repo.js';
import { newRunId } from '../../dist/core/ids.js';

const [url, worktreeArg, countText, maxActiveText = '100'] = process.argv.slice(2);
const database = await openDatabase({ url, maxConnections: 10 });
const store = new RunStore(database.db);
const now = new Date();
const attempts = Array.from({ length: Number(countText) }, async () => {
  const id = newRunId();
  const worktree = worktreeArg.endsWith('*') ? `${worktreeArg.slice(0, -1)}${id}` : worktreeArg;
  try {
    await store.launches.createRun(
      {
        id,
        vendor: 'codex',
        status: 'starting',
        task: 'race',
        cwd: worktree,
        worktreeRoot: worktree,
        options: { timeoutMinutes: 1, progress: false },
        origin: { platform: 'test', chatId: '1', senderId: '1', messageId: id },
        supervisor: `${hostname()}:${process.pid}`,
        createdAt: now,
      },
      { runId: id, kind: 'started', target: { platform: 'test', chatId: '1' }, body: `[run ${id}] started` },
      Number(maxActiveText),
      now,
    );
    return 'won';
  } catch (err) {
    return err.code ?? String(err);
  }
});
const results = await Promise.all(attempts);
await database.close();
process.stdout.write(
  `${JSON.stringify({ won: results.filter((r) => r === 'won').length, refused: results.filter((r) => r !== 'won') })}\n`,
);
