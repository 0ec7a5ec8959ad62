/**
 * `baton schedule add|list|pause|resume|rm`, run as the built command on a real database: what
 * it adds is what the service's nodes fire (docs/schedules.md).
 */
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCliHome, type CliHome } from '../support/cli.js';

describe('baton schedule', () => {
  let home: CliHome;
  beforeAll(async () => {
    home = await makeCliHome({ binDirs: [], harnessToml: '' });
    await appendFile(
      join(home.batonHome, 'config.toml'),
      '[schedules]\ntimezone = "Europe/Berlin"\n[channels.telegram]\nowner_user_id = "123"\n',
    );
  });
  afterAll(async () => home?.dispose());

  it('adds a schedule that reports to a configured chat, lists, pauses, resumes and removes it', async () => {
    const added = await home.baton([
      'schedule',
      'add',
      'every',
      'weekday',
      '07:00',
      'to:telegram:123',
      'name:nightly',
      '/codex',
      'run the tests',
    ]);
    expect(added.stderr).toBe('');
    expect(added.exitCode).toBe(0);
    const id = /⏰ nightly · (s_[0-9a-f]{8}) created · every `0 7 \* \* 1-5` \(Europe\/Berlin\)/.exec(
      added.stdout,
    )?.[1];
    expect(id).toBeDefined();

    const listed = await home.baton(['schedule', 'list']);
    expect(listed.stdout).toContain(`⏰ nightly · ${id!} · active`);
    expect(listed.stdout).toContain('/codex run the tests');

    expect((await home.baton(['schedule', 'pause', id!])).stdout).toContain(`${id!} paused.`);
    expect((await home.baton(['schedule', 'list'])).stdout).toContain(`${id!} · paused`);
    expect((await home.baton(['schedule', 'resume', id!])).stdout).toContain(`${id!} resumed.`);
    expect((await home.baton(['schedule', 'rm', id!])).stdout).toContain(`${id!} deleted.`);
    expect((await home.baton(['schedule', 'list'])).stdout).toContain('No schedules.');
    const gone = await home.baton(['schedule', 'pause', id!]);
    expect(gone.exitCode).not.toBe(0);
    expect(gone.stderr).toContain(`No schedule ${id!}.`);
  });

  it('refuses a schedule without the chat it reports to, or with a bad time', async () => {
    const noTarget = await home.baton(['schedule', 'add', 'at', '+30m', '/codex', 'rebase']);
    expect(noTarget.exitCode).not.toBe(0);
    expect(noTarget.stderr).toContain('needs the chat its runs report to: to:PLATFORM:CHAT_ID');
    const badCron = await home.baton([
      'schedule',
      'add',
      'every',
      '61',
      '*',
      '*',
      '*',
      '*',
      'to:telegram:123',
      '/codex',
      'x',
    ]);
    expect(badCron.exitCode).not.toBe(0);
    expect(badCron.stderr).toContain('not a valid time');
    const stranger = await home.baton(['schedule', 'add', 'every', 'hour', 'to:slack:C1', '/codex', 'x']);
    expect(stranger.stderr).toContain('[channels.slack]');
  });
});
