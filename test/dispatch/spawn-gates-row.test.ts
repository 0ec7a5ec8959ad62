/**
 * Attack: a queued or routed run starts as its database row says, and the row is not the launch
 * that passed the gates. Anyone who can write the shared database (another node, a hand edit)
 * could turn a queued `workspace-write` run into `danger-full-access`, move it outside every
 * root, drop its caps or give it an option its vendor never takes, and the run spawned so. Each
 * row here is edited while it waits; when its turn comes it must be refused with the gate's code,
 * end `failed`, tell the owner why, and never reach the CLI.
 */
import { chmod, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BatonConfig } from '../../src/config/index.js';
import type { RunId } from '../../src/core/ids.js';
import type { NodeView } from '../../src/fleet/nodes.js';
import { createHarness, dispatcherFor, FAKE_CODEX, inbound, type TestHarness } from '../support/harness.js';
import { waitFor } from '../support/wait.js';

/** One way of editing a waiting run's row, with the refusal it must meet. */
interface Edit {
  name: string;
  /** SQL `set` clause on `runs` (the row is `id = $id`). */
  set: (h: TestHarness) => ReturnType<typeof sql>;
  code: string;
  /** Words the owner is told. */
  says: RegExp;
}

const EDITS: Edit[] = [
  {
    name: 'posture edited to danger-full-access',
    set: () =>
      sql`options = options || '{"sandbox":"danger-full-access"}'::jsonb, launch = launch || '{"posture":"danger-full-access"}'::jsonb`,
    code: 'posture_refused',
    says: /danger-full-access is refused/,
  },
  {
    name: 'cwd moved outside every root',
    set: () => sql`cwd = '/usr', worktree_root = '/usr'`,
    code: 'outside_workspace',
    says: /\/usr is outside the workspace/,
  },
  {
    name: 'a worktree mapping that points outside the roots',
    set: (h) => sql`cwd = '/usr/bin', worktree_root = '/usr', source_root = ${h.root}`,
    code: 'outside_workspace',
    says: /outside the workspace/,
  },
  {
    name: 'its token cap removed',
    set: () => sql`options = options - 'maxTokens'`,
    code: 'cap_missing',
    says: /default_max_tokens/,
  },
  {
    name: 'a dollar budget codex does not take',
    set: () => sql`options = options || '{"budgetUsd":5}'::jsonb, launch = launch || '{"maxBudgetUsd":5}'::jsonb`,
    code: 'option_refused',
    says: /budget: is a claude option/,
  },
  {
    name: 'a resume id that is a flag',
    set: () => sql`launch = launch || '{"resumeSessionId":"--dangerously-bypass-approvals-and-sandbox"}'::jsonb`,
    code: 'option_refused',
    says: /session/,
  },
  {
    // Its own row as the parent: a parent that exists, but whose session is not the one named.
    name: "a resume of a session that is not its parent run's",
    set: () =>
      sql`parent_run_id = id, launch = launch || '{"resumeSessionId":"0199a5e4-5c1d-7e02-9b1a-another0session"}'::jsonb`,
    code: 'option_refused',
    says: /not its parent run's session/,
  },
  {
    name: 'a request field no launch sets',
    set: () => sql`launch = launch || '{"approvalMcpConfig":"/tmp/evil.json"}'::jsonb`,
    code: 'option_refused',
    says: /approvalMcpConfig/,
  },
];

describe('a queued or routed run whose row was edited while it waited', () => {
  let h: TestHarness;
  let argvLog: string;
  const config = (root: string): string =>
    `[harness]\napproved = true\nmax_active = 1\ndefault_max_tokens = 100000\n[workspace]\nroots = [${JSON.stringify(root)}]\n[channels.telegram]\nowner_user_id = "1"\n`;

  beforeAll(async () => {
    // The CLI the runs get: records every argv it is started with, then acts as the fake codex.
    const bin = await mkdtemp(join(tmpdir(), 'baton-argv-'));
    argvLog = join(bin, 'argv.log');
    const wrapper = join(bin, 'codex-recording');
    await writeFile(
      wrapper,
      `#!/bin/sh\nprintf '%s\\n' "$*" >> ${JSON.stringify(argvLog)}\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(FAKE_CODEX)} "$@"\n`,
    );
    await chmod(wrapper, 0o755);
    await chmod(bin, 0o777);
    await writeFile(argvLog, '', { mode: 0o666 });
    await chmod(argvLog, 0o666);
    h = await createHarness({ replaceConfig: ({ root }) => config(root), codexBinary: wrapper });
    // What the worktree-mapping edit maps its cwd to: a real directory inside the root.
    await mkdir(join(h.root, 'bin'), { recursive: true });
  }, 60_000);
  afterAll(async () => h?.dispose());

  async function spawned(): Promise<string[]> {
    return (await readFile(argvLog, 'utf8')).split('\n').filter(Boolean);
  }

  async function expectRefused(runId: RunId, edit: Edit, before: number): Promise<void> {
    await waitFor(
      async () => !['queued', 'starting', 'running'].includes((await h.store.runs.getRun(runId))?.status ?? ''),
      { timeoutMs: 60_000, what: 'the edited run ends', intervalMs: 100 },
    );
    const run = await h.store.runs.getRun(runId);
    expect(run).toMatchObject({ status: 'failed', reason: edit.code, startedAt: null, pid: null });
    const outcome = h.channel.sent.map((m) => m.text).find((t) => t.startsWith(`[run ${runId}] failed`));
    expect(outcome).toMatch(edit.says);
    expect(outcome).toContain(`Reason: ${edit.code}`);
    // The CLI was never started for it.
    expect((await spawned()).length).toBe(before);
  }

  describe('queued here for a slot', () => {
    for (const edit of EDITS) {
      it(`${edit.name}: refused at spawn (${edit.code})`, async () => {
        const dispatcher = dispatcherFor(h);
        const busy = join(h.root, `busy-${EDITS.indexOf(edit)}`);
        const waiting = join(h.root, `waiting-${EDITS.indexOf(edit)}`);
        for (const dir of [busy, waiting]) await mkdir(dir, { recursive: true });
        const first = await dispatcher.handle(inbound('1', `/codex in:${busy} hang`));
        const firstId = (first as { runId: RunId }).runId;
        const second = await dispatcher.handle(inbound('1', `/codex sandbox:workspace-write in:${waiting} success`));
        const secondId = (second as { runId: RunId }).runId;
        expect(await h.store.runs.getRun(secondId)).toMatchObject({
          status: 'queued',
          options: { maxTokens: 100000, sandbox: 'workspace-write' },
        });
        await waitFor(
          async () => (await spawned()).length > 0 && (await h.store.runs.getRun(firstId))?.status === 'running',
          {
            timeoutMs: 10_000,
            what: `the first run runs: ${JSON.stringify(await h.store.runs.getRun(firstId))} ${JSON.stringify(h.channel.sent)}`,
            intervalMs: 100,
          },
        );
        const before = (await spawned()).length;

        await h.database.db.execute(sql`update runs set ${edit.set(h)} where id = ${secondId}`);
        await h.supervisor.cancel(firstId, 'owner_cancel');
        await dispatcher.startQueued();
        await expectRefused(secondId, edit, before);
      }, 120_000);
    }
  });

  describe('routed to this node by another', () => {
    for (const edit of EDITS) {
      it(`${edit.name}: refused at spawn (${edit.code})`, async () => {
        const target = join(h.root, `routed-${EDITS.indexOf(edit)}`);
        await mkdir(target, { recursive: true });
        const node = (name: string, roots: string[], self: boolean): NodeView => ({
          name,
          host: name,
          pid: 1,
          roots,
          startedAt: new Date(),
          heartbeatAt: new Date(),
          silentSeconds: 0,
          alive: true,
          self,
        });
        const nodes = async (self: string): Promise<NodeView[]> => [
          node('alpha', [join(h.dir, 'alpha-only')], self === 'alpha'),
          node('gamma', [h.root], self === 'gamma'),
        ];
        // alpha receives the command (its own root holds nothing of h.root); gamma holds the directory.
        const alphaConfig: BatonConfig = {
          ...h.config,
          workspace: { ...h.config.workspace, roots: [join(h.dir, 'alpha-only')] },
        };
        await mkdir(join(h.dir, 'alpha-only'), { recursive: true });
        const alpha = dispatcherFor(h, {
          config: alphaConfig,
          fleet: { name: 'alpha', list: () => nodes('alpha') },
        });
        const gamma = dispatcherFor(h, {
          fleet: { name: 'gamma', list: () => nodes('gamma') },
        });
        const sent = await alpha.handle(inbound('1', `/codex sandbox:workspace-write in:${target} success`));
        expect(sent.kind).toBe('launched');
        const runId = (sent as { runId: RunId }).runId;
        expect(await h.store.runs.getRun(runId)).toMatchObject({
          status: 'queued',
          node: 'gamma',
          options: { maxTokens: 100000 },
        });
        const before = (await spawned()).length;

        // Edited before gamma prepares it, and again after (a placed row waits for its slot too).
        if (edit.name.includes('cwd') || edit.name.includes('worktree')) {
          await h.database.db.execute(
            sql`update runs set launch = launch - 'route', cwd = ${target}, worktree_root = ${target} where id = ${runId}`,
          );
        }
        await h.database.db.execute(sql`update runs set ${edit.set(h)} where id = ${runId}`);
        await gamma.startQueued();
        await expectRefused(runId, edit, before);
      }, 120_000);
    }
  });
});
