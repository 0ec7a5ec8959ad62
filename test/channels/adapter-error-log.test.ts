/**
 * No log line holds a task's text (issue #18 item 6). The logger's `err` serializer withholds a
 * failed query's parameters (core/logger.ts `serializeError`), but only for an `Error` object:
 * the Slack and Discord adapters flatten a handler's error to its message first
 * (`describeSlackError` / `describeDiscordError`, "slack event handler failed" / "discord message
 * handler failed"), and a `DrizzleQueryError`'s message is `Failed query: …\nparams: …` with the
 * task among the params. The dispatcher throws exactly that when the database fails while it
 * stores a run (`Dispatcher.handle`: "Throws only on infrastructure failure").
 *
 * A real failed query (a NUL, which PostgreSQL refuses) on the test database gives the error; the
 * real Slack adapter in Socket Mode against the fake Slack, logging through `createLogger`.
 */
import { Writable } from 'node:stream';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SlackAdapter } from '../../src/channels/slack/adapter.js';
import { describeDiscordError } from '../../src/channels/discord/errors.js';
import { systemClock } from '../../src/core/clock.js';
import { createLogger } from '../../src/core/logger.js';
import { startFakeSlack, type FakeSlack } from '../fakes/fake-slack.js';
import { RecordingChannel } from '../fakes/recording-channel.js';
import { Outbox } from '../../src/delivery/outbox.js';
import { RunStore } from '../../src/store/runs-repo.js';
import { useTestDatabase, testEngine } from '../support/database.js';

const TOKEN = 'xoxb-unitfake3';
const APP_TOKEN = 'xapp-unit-test-app-token3';
const TASK = 'rotate the prod signing key 9c2d41';

const database = useTestDatabase();
let queryError: Error;
let slack: FakeSlack;
let adapter: SlackAdapter;
const lines: string[] = [];
const logger = createLogger({
  level: 'info',
  destination: new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  }),
});

beforeAll(async () => {
  queryError = await database.db.execute(sql`select ${`${TASK}\u0000`}::text as task`).then(
    () => new Error('the query did not fail'),
    (e: unknown) => e as Error,
  );
  slack = await startFakeSlack({ botToken: TOKEN, appToken: APP_TOKEN });
  adapter = new SlackAdapter({
    token: TOKEN,
    transport: { kind: 'socket', appToken: APP_TOKEN },
    apiUrl: slack.url,
    clock: systemClock,
    logger,
  });
  await adapter.start(async () => {
    throw queryError;
  });
});

afterAll(async () => {
  await adapter?.stop();
  await slack?.close();
});

describe(`a handler that failed on the database (${testEngine})`, () => {
  it('the failed query carries the task, as the dispatcher would throw it', () => {
    expect(queryError.message).toContain(TASK);
  });

  it('Slack: "slack event handler failed" does not log the task', async () => {
    const envelope = slack.userMessage({ kind: 'im', channel: 'D3', user: 'U3', text: `/codex ${TASK}` });
    await slack.deliverSocket(envelope, 5_000);
    await expect
      .poll(() => lines.some((line) => line.includes('slack event handler failed')), { timeout: 5_000 })
      .toBe(true);
    expect(lines.filter((line) => line.includes(TASK))).toEqual([]);
  });

  it('Discord: what "discord message handler failed" logs does not hold the task', () => {
    // The adapter logs `{ err: describeDiscordError(err, token) }` (channels/discord/adapter.ts).
    const before = lines.length;
    logger.error(
      { channel: 'discord', err: describeDiscordError(queryError, 'discord-token') },
      'discord message handler failed',
    );
    expect(lines.slice(before).filter((line) => line.includes(TASK))).toEqual([]);
  });
});

describe('the outbox', () => {
  it('logs a failed delivery write without the failed query’s parameters', async () => {
    // The real store on the test database, with its one write after a send failing the way a
    // failed query does (the outbox then keeps the row and logs "delivery attempt failed").
    const store = new RunStore(database.db);
    store.outbox.recordPartsSent = async () => {
      throw queryError;
    };
    const outbox = new Outbox({
      store,
      clock: systemClock,
      logger,
      adapters: new Map([['telegram', new RecordingChannel()]]),
      policy: { backoffBaseMs: 30_000, backoffCapMs: 60_000, maxAttempts: 5, maxAgeMs: 86_400_000 },
    });
    const before = lines.length;
    await outbox.send({ runId: null, kind: 'notice', target: { platform: 'telegram', chatId: '1' }, body: 'a notice' });
    const logged = lines.slice(before).join('');
    expect(logged).toContain('delivery attempt failed');
    expect(logged).toContain('Failed query');
    expect(logged).not.toContain(TASK);
  });
});
