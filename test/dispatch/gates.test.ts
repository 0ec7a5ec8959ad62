/**
 * Launch gates (PRODUCT.md §6) as a table: each row is one refusal, asserting its stable code,
 * the words of its message, and that nothing was launched.
 */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GUEST_REFUSAL } from '../../src/dispatch/trust.js';
import { steerDeferredText, steerDroppedText } from '../../src/wording/converse.js';
import { waitFor } from '../support/wait.js';
import { createHarness, inbound, type HarnessOptions, type TestHarness } from '../support/harness.js';
import { useTestDatabase, testEngine } from '../support/database.js';

interface GateRow {
  name: string;
  text: (h: TestHarness) => string;
  sender?: string;
  harness?: HarnessOptions;
  setup?: (h: TestHarness) => Promise<void>;
  code: string;
  message: RegExp | string;
}

const rows: GateRow[] = [
  {
    name: 'not approved',
    harness: {
      replaceConfig: ({ root }) =>
        `[workspace]\nroots = [${JSON.stringify(root)}]\n[channels.telegram]\nowner_user_id = "1"\n`,
    },
    text: (h) => `/codex in:${h.root} task`,
    code: 'not_approved',
    message:
      'Coding agents are not yet approved on this machine. Approve with `baton approve` (or set [harness] approved = true), then send the command again.',
  },
  {
    name: 'vendor CLI missing',
    harness: { codexBinary: null },
    text: (h) => `/codex in:${h.root} task`,
    code: 'vendor_missing',
    message: /The codex CLI was not found on PATH/,
  },
  {
    name: 'guest',
    sender: '2',
    text: (h) => `/codex in:${h.root} task`,
    code: 'not_authorized',
    message: GUEST_REFUSAL,
  },
  {
    name: 'outside the workspace',
    text: () => '/codex in:/usr task',
    code: 'outside_workspace',
    message: /^\/usr is outside the workspace\. Grant it with `baton grant path DIR`/,
  },
  {
    name: 'a .. escape',
    text: (h) => `/codex in:${h.root}/../.. task`,
    code: 'outside_workspace',
    message: /is outside the workspace/,
  },
  {
    name: 'a symlink inside a root pointing outside it',
    setup: async (h) => symlink('/usr', join(h.root, 'escape')),
    text: (h) => `/codex in:${h.root}/escape task`,
    code: 'outside_workspace',
    message: /^\/usr is outside the workspace/,
  },
  {
    name: 'a directory that does not exist',
    text: (h) => `/codex in:${h.root}/nope task`,
    code: 'cwd_missing',
    message: /does not exist/,
  },
  {
    name: 'an unknown alias',
    text: () => '/codex in:nosuchproject task',
    code: 'unknown_alias',
    message: /"nosuchproject" is not a project alias/,
  },
  {
    name: 'no directory given and no default',
    text: () => '/codex task',
    code: 'usage',
    message: /No working directory/,
  },
  {
    name: 'danger-full-access',
    text: (h) => `/codex in:${h.root} sandbox:danger-full-access task`,
    code: 'posture_refused',
    message: /danger-full-access is refused/,
  },
  {
    name: 'artifact quota breached',
    harness: {
      configToml: () => '',
      replaceConfig: ({ root }) =>
        `[harness]\napproved = true\nartifact_quota_gb = 0.000001\n[workspace]\nroots = [${JSON.stringify(root)}]\n[channels.telegram]\nowner_user_id = "1"\n`,
    },
    setup: async (h) => {
      await mkdir(join(h.runsDir, 'hr_000000000001'), { recursive: true });
      await writeFile(join(h.runsDir, 'hr_000000000001', 'events.jsonl'), 'x'.repeat(2048));
    },
    text: (h) => `/codex in:${h.root} task`,
    code: 'quota_exceeded',
    message: /^The run artifact store .* holds 2\.0 KiB, at or over its quota of 1\.0 KiB\. Delete old run directories/,
  },
  {
    name: 'free space below the floor',
    harness: {
      replaceConfig: ({ root }) =>
        `[harness]\napproved = true\nmin_free_gb = 1000000\n[workspace]\nroots = [${JSON.stringify(root)}]\n[channels.telegram]\nowner_user_id = "1"\n`,
    },
    text: (h) => `/codex in:${h.root} task`,
    code: 'free_space_low',
    message:
      /^Only .* free on the disk holding .*, below the floor of 977 TiB\. Free some space, or lower \[harness\] min_free_gb/,
  },
  {
    name: 'another run active in the same worktree (queue = false)',
    harness: {
      replaceConfig: ({ root }) =>
        `[harness]\napproved = true\nqueue = false\n[workspace]\nroots = [${JSON.stringify(root)}]\n[channels.telegram]\nowner_user_id = "1"\n`,
    },
    setup: async (h) => {
      const first = await h.dispatcher.handle(inbound('1', `/codex in:${h.root} hang`));
      expect(first.kind).toBe('launched');
    },
    text: (h) => `/codex in:${h.root} task`,
    code: 'worktree_busy',
    message: /^Another run is active in \/.*\/work/,
  },
  {
    name: 'max_active reached (queue = false)',
    harness: {
      configToml: () => '',
      replaceConfig: ({ root }) =>
        `[harness]\napproved = true\nmax_active = 1\nqueue = false\n[workspace]\nroots = [${JSON.stringify(root)}]\n[channels.telegram]\nowner_user_id = "1"\n`,
    },
    setup: async (h) => {
      await mkdir(join(h.root, 'a'));
      expect((await h.dispatcher.handle(inbound('1', `/codex in:${h.root}/a hang`))).kind).toBe('launched');
      await mkdir(join(h.root, 'b'));
    },
    text: (h) => `/codex in:${h.root}/b task`,
    code: 'max_active',
    message: /1 coding run is already active \(max_active = 1\)/,
  },
];

describe(`launch gates (${testEngine})`, () => {
  // Each row gets a fresh database, opened in a hook: on a loaded machine that is the slow part,
  // and it is not what a row tests.
  const database = useTestDatabase({ per: 'test' });

  it.each(rows)('refuses: $name', async (row) => {
    const h = await createHarness({ ...row.harness, database });
    try {
      await row.setup?.(h);
      const before = (await h.store.runs.recentRuns(100)).length;
      const message = inbound(row.sender ?? '1', row.text(h));
      const result = await h.dispatcher.handle(message);
      expect(result).toEqual({ kind: 'refused', code: row.code });
      const reply = h.channel.sent.find((m) => m.replyToMessageId === message.messageId);
      expect(reply?.text).toMatch(
        typeof row.message === 'string' ? new RegExp(`^${escape(row.message)}$`) : row.message,
      );
      expect((await h.store.runs.recentRuns(100)).length).toBe(before);
    } finally {
      await h.dispose();
    }
  });
});

describe('trust before writing', () => {
  let h: TestHarness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(async () => h?.dispose());

  it('a stranger is ignored and leaves no inbound record; a duplicate event is acted on once', async () => {
    const stranger = inbound('3', `/codex in:${h.root} task`);
    expect(await h.dispatcher.handle(stranger)).toEqual({ kind: 'ignored' });
    expect(await h.store.inbox.recordInbound('telegram', stranger.dedupeKey, new Date())).toBe(true);

    const help = inbound('1', '/help');
    expect(await h.dispatcher.handle(help)).toEqual({ kind: 'answered' });
    expect(await h.dispatcher.handle(help)).toEqual({ kind: 'duplicate' });
    expect(h.channel.sent.filter((m) => m.replyToMessageId === help.messageId)).toHaveLength(1);
  });

  it('ignores bots, even the owner id', async () => {
    expect(await h.dispatcher.handle(inbound('1', '/help', { senderIsBot: true }))).toEqual({ kind: 'ignored' });
  });

  it('answers /whoami to a stranger only in a direct message', async () => {
    expect(await h.dispatcher.handle(inbound('3', '/whoami', { isDirect: false, chatId: '-5' }))).toEqual({
      kind: 'ignored',
    });
    expect(await h.dispatcher.handle(inbound('3', '/whoami'))).toEqual({ kind: 'answered' });
    expect(h.channel.sent.at(-1)?.text).toBe('Your telegram user id: 3\nThis chat: 3\nRole: stranger');
  });

  it('answers the exact texts for unknown and finished runs', async () => {
    await h.dispatcher.handle(inbound('1', '/cancel hr_000000000000'));
    expect(h.channel.sent.at(-1)?.text).toBe('No coding run found for that id.');
    const launched = await h.dispatcher.handle(inbound('1', `/codex in:${h.root} success`));
    if (launched.kind !== 'launched') throw new Error('not launched');
    await h.supervisor.idle();
    await h.dispatcher.handle(inbound('1', `/cancel ${launched.runId}`));
    expect(h.channel.sent.at(-1)?.text).toBe('That coding run has already finished.');
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('resume by reply', () => {
  let h: TestHarness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(async () => h?.dispose());

  it('resumes the newest run of a thread, refuses a guest, and refuses while active', async () => {
    const root = inbound('1', `/codex in:${h.root} success`, { threadId: 'T1' });
    const first = await h.dispatcher.handle(root);
    if (first.kind !== 'launched') throw new Error('not launched');
    await h.supervisor.idle();

    const guest = await h.dispatcher.handle(
      inbound('2', 'go on', { chatId: '1', threadId: 'T1', replyToMessageId: 'T1' }),
    );
    expect(guest).toEqual({ kind: 'refused', code: 'not_authorized' });

    const resumed = await h.dispatcher.handle(inbound('1', 'hang', { threadId: 'T1', replyToMessageId: 'T1' }));
    if (resumed.kind !== 'launched') throw new Error(`not launched: ${JSON.stringify(resumed)}`);
    expect(await h.store.runs.getRun(resumed.runId)).toMatchObject({ parentRunId: first.runId, vendor: 'codex' });

    // The fake codex takes no message while it runs: the reply would become a resumed run once
    // the run has ended, and the answer says so; the owner cancels the run instead, so it is not.
    const more = inbound('1', 'success more', { threadId: 'T1', replyToMessageId: 'T1' });
    expect(await h.dispatcher.handle(more)).toEqual({ kind: 'deferred' });
    const answers = () => h.channel.sent.filter((m) => m.replyToMessageId === more.messageId).map((m) => m.text);
    expect(answers()).toEqual([steerDeferredText(`[run ${resumed.runId}]`, 'unsupported')]);
    await h.supervisor.cancel(resumed.runId, 'owner_cancel');
    await waitFor(() => answers().length === 2, { what: 'the answer to the dropped message' });
    expect(answers()[1]).toBe(steerDroppedText(`[run ${resumed.runId}]`));
    expect((await h.store.runs.recentRuns(5)).some((r) => r.parentRunId === resumed.runId)).toBe(false);

    // A plain reply to a message that is not ours is no resume of that run: it is a plain
    // message of the conversation, a new run, which asks for a directory (this config sets none).
    const plain = await h.dispatcher.handle(inbound('1', 'success', { chatId: '77', replyToMessageId: '999999' }));
    expect(plain).toEqual({ kind: 'refused', code: 'usage' });
    expect(h.channel.sent.at(-1)?.text).toMatch(/director/i);
  });
});
