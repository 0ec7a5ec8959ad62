/**
 * Schedules fired on a real database with the real dispatcher and the fake codex CLI, the clock
 * moved by hand: a slot fires once whichever node looks, a missed slot fires late once (or not),
 * the overlap guard skips or queues, and a gate that now refuses blocks the firing.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfigToml } from '../../../src/config/index.js';
import { silentLogger } from '../../../src/core/logger.js';
import type { Dispatcher } from '../../../src/dispatch/dispatcher.js';
import { firingMessage, ScheduleFiring } from '../../../src/dispatch/schedules/firing.js';
import { ScheduleStore } from '../../../src/store/schedules-repo.js';
import type { ScheduleRow } from '../../../src/store/schema.js';
import { ManualClock } from '../../support/clock.js';
import { testEngine } from '../../support/database.js';
import { createHarness, dispatcherFor, inbound, type TestHarness } from '../../support/harness.js';
import { waitFor } from '../../support/wait.js';

describe(`schedule firing on ${testEngine}`, () => {
  let h: TestHarness;
  let schedules: ScheduleStore;
  let clock: ManualClock;
  let dispatcher: Dispatcher;
  let catchUp: 'one' | 'none';

  beforeEach(async () => {
    h = await createHarness();
    schedules = new ScheduleStore(h.database.db);
    clock = new ManualClock('2026-12-04T06:59:30Z');
    dispatcher = dispatcherFor(h, { schedules, clock });
    catchUp = 'one';
  });
  afterEach(async () => h.dispose());

  /** A node's firing loop over `via` (the dispatcher it launches with). */
  const node = (name: string, via: Dispatcher = dispatcher) =>
    new ScheduleFiring({
      schedules,
      outbox: h.outbox,
      clock,
      logger: silentLogger(),
      node: name,
      catchUp: () => catchUp,
      handle: (message) => via.handle(message),
    });

  const create = async (text: string): Promise<ScheduleRow> => {
    const result = await dispatcher.handle(inbound('1', text));
    expect(result).toEqual({ kind: 'answered' });
    const [row] = await schedules.list();
    return row!;
  };
  const firings = async (id: string) =>
    h.database.db.query.scheduleFirings.findMany({
      where: (f, { eq }) => eq(f.scheduleId, id),
      orderBy: (f, { asc }) => asc(f.slotAt),
    });
  const runsOf = async () => h.database.db.query.runs.findMany();
  const settle = async () =>
    waitFor(async () => (await runsOf()).every((r) => !['queued', 'starting', 'running'].includes(r.status)));

  it('fires each slot once, however many nodes look at it at once', async () => {
    const schedule = await create(`/every minute name:tests /codex in:${h.root} success`);
    expect(h.channel.sent.at(-1)?.text).toMatch(/^⏰ tests · s_[0-9a-f]{8} created · every `\* \* \* \* \*`/);
    await node('a').tick();
    expect(await runsOf()).toHaveLength(0);
    clock.set(Date.parse('2026-12-04T07:00:02Z'));
    await Promise.all([node('a').tick(), node('b').tick(), node('c').tick()]);
    await node('a').tick();
    const runs = await runsOf();
    expect(runs).toHaveLength(1);
    const rows = await firings(schedule.id);
    expect(rows).toMatchObject([{ slotAt: new Date('2026-12-04T07:00:00Z'), status: 'launched', runId: runs[0]!.id }]);
    await h.channel.waitForText(new RegExp(`^⏰ tests · ${schedule.id} fires$`));
    await h.channel.waitForText(new RegExp(`^\\[run ${runs[0]!.id}\\] started · .* · ⏰ tests · ${schedule.id}$`));
    await settle();
    await dispatcher.handle(inbound('1', '/runs'));
    expect(h.channel.sent.at(-1)?.text).toContain(`${runs[0]!.id} · completed`);
    expect(h.channel.sent.at(-1)?.text).toContain(`· ⏰ tests · ${schedule.id} · success`);
    await dispatcher.handle(inbound('1', `/runs ${runs[0]!.id}`));
    expect(h.channel.sent.at(-1)?.text).toContain(`origin: ⏰ tests · ${schedule.id}`);
  });

  it('fires only the latest slot missed while every node was down, saying how late; none with catch_up none', async () => {
    const schedule = await create(`/every hour /codex in:${h.root} success`);
    clock.set(Date.parse('2026-12-04T10:20:00Z'));
    await node('a').tick();
    await node('b').tick();
    expect(await firings(schedule.id)).toMatchObject([
      { slotAt: new Date('2026-12-04T10:00:00Z'), status: 'launched', lateMs: 20 * 60_000 },
    ]);
    await h.channel.waitForText(/fires · late by 20m 00s/);
    await settle();

    catchUp = 'none';
    clock.set(Date.parse('2026-12-04T13:30:00Z'));
    await node('a').tick();
    const rows = await firings(schedule.id);
    expect(rows.map((r) => [r.slotAt.toISOString(), r.status])).toEqual([
      ['2026-12-04T10:00:00.000Z', 'launched'],
      ['2026-12-04T13:00:00.000Z', 'missed'],
    ]);
    expect(await runsOf()).toHaveLength(1);
  });

  it('takes over a slot whose node died between its claim and its launch', async () => {
    const schedule = await create(`/every hour /codex in:${h.root} success`);
    const slotAt = new Date('2026-12-04T07:00:00Z');
    await schedules.claim({ scheduleId: schedule.id, slotAt, node: 'dead', now: new Date('2026-12-04T07:00:01Z') });
    clock.set(Date.parse('2026-12-04T07:01:00Z'));
    await node('a').tick();
    expect(await runsOf()).toHaveLength(0);
    clock.set(Date.parse('2026-12-04T07:02:30Z'));
    await Promise.all([node('a').tick(), node('b').tick()]);
    await node('a').tick();
    const runs = await runsOf();
    expect(runs).toHaveLength(1);
    expect(await firings(schedule.id)).toMatchObject([{ slotAt, status: 'launched', runId: runs[0]!.id }]);
    await settle();
  });

  it('never launches a slot twice: a taken-over slot its dead node had launched stays one run', async () => {
    const schedule = await create(`/every hour /codex in:${h.root} success`);
    const slotAt = new Date('2026-12-04T07:00:00Z');
    await schedules.claim({ scheduleId: schedule.id, slotAt, node: 'dead', now: new Date('2026-12-04T07:00:01Z') });
    // The dead node launched the slot, then died before recording it.
    const row = (await schedules.get(schedule.id))!;
    expect(await dispatcher.handle(firingMessage(row, { slotAt }, clock.now()))).toMatchObject({ kind: 'launched' });
    clock.set(Date.parse('2026-12-04T07:02:30Z'));
    await node('a').tick();
    expect(await runsOf()).toHaveLength(1);
    expect((await firings(schedule.id))[0]).toMatchObject({ status: 'launched', reason: 'duplicate' });
    await settle();
  });

  it('skips a slot while the previous run is active, and says so in the next firing', async () => {
    const schedule = await create(`/every minute /codex in:${h.root} hang`);
    clock.set(Date.parse('2026-12-04T07:00:01Z'));
    await node('a').tick();
    await waitFor(async () => (await runsOf())[0]?.status === 'running');
    clock.set(Date.parse('2026-12-04T07:01:01Z'));
    await node('b').tick();
    expect((await schedules.lastFiring(schedule.id))?.status).toBe('skipped');
    await dispatcher.handle(inbound('1', '/stop'));
    await settle();
    clock.set(Date.parse('2026-12-04T07:02:01Z'));
    await node('a').tick();
    await h.channel.waitForText(/fires · 1 earlier slot skipped: the previous run was still active/);
    await dispatcher.handle(inbound('1', '/stop'));
    await settle();
  });

  it('with overlap:queue, a slot waits for the previous run and then fires', async () => {
    const schedule = await create(`/every minute overlap:queue /codex in:${h.root} hang`);
    clock.set(Date.parse('2026-12-04T07:00:01Z'));
    await node('a').tick();
    await waitFor(async () => (await runsOf())[0]?.status === 'running');
    clock.set(Date.parse('2026-12-04T07:01:01Z'));
    await node('a').tick();
    expect((await schedules.lastFiring(schedule.id))?.status).toBe('waiting');
    await node('b').tick();
    expect(await runsOf()).toHaveLength(1);
    await dispatcher.handle(inbound('1', '/stop'));
    await settle();
    await node('b').tick();
    await h.channel.waitForText(/fires · waited for the previous run to end/);
    expect((await runsOf()).length).toBe(2);
    await dispatcher.handle(inbound('1', '/stop'));
    await settle();
  });

  it('blocks a firing whose consent or directory a gate now refuses, tells the conversation, launches nothing', async () => {
    const schedule = await create(`/every minute /codex in:${h.root} success`);
    const withdrawn = parseConfigToml(
      `[harness]\napproved = false\n[workspace]\nroots = [${JSON.stringify(h.root)}]\n[channels.telegram]\nowner_user_id = "1"\n`,
      { configPath: `${h.dir}/config.toml`, homeDir: `${h.dir}/home` },
    );
    clock.set(Date.parse('2026-12-04T07:00:01Z'));
    await node('a', dispatcherFor(h, { schedules, clock, config: withdrawn })).tick();
    expect(await schedules.lastFiring(schedule.id)).toMatchObject({ status: 'blocked', reason: 'not_approved' });
    await h.channel.waitForText(/Coding agents are not yet approved on this machine/);
    await h.channel.waitForText(new RegExp(`^⏰ .* · ${schedule.id} blocked \\(not_approved\\): nothing was launched`));

    const elsewhere = parseConfigToml(
      `[harness]\napproved = true\n[workspace]\nroots = [${JSON.stringify(`${h.dir}/home`)}]\n[channels.telegram]\nowner_user_id = "1"\n`,
      { configPath: `${h.dir}/config.toml`, homeDir: `${h.dir}/home` },
    );
    clock.set(Date.parse('2026-12-04T07:01:01Z'));
    await node('a', dispatcherFor(h, { schedules, clock, config: elsewhere })).tick();
    expect(await schedules.lastFiring(schedule.id)).toMatchObject({ status: 'blocked', reason: 'outside_workspace' });
    expect(await runsOf()).toHaveLength(0);
  });

  it('lets only the owner create one: never a guest or a forwarded message', async () => {
    expect(await dispatcher.handle(inbound('2', `/every minute /codex in:${h.root} success`))).toEqual({
      kind: 'refused',
      code: 'not_authorized',
    });
    expect(await dispatcher.handle(inbound('1', `/at +30m /codex in:${h.root} success`, { forwarded: true }))).toEqual({
      kind: 'refused',
      code: 'forwarded_message',
    });
    expect(await schedules.list()).toHaveLength(0);
  });

  it('pauses, resumes without firing what it missed, runs now from its button, and deletes', async () => {
    const schedule = await create(`/every minute /codex in:${h.root} success`);
    await dispatcher.handle(inbound('1', `/pause ${schedule.id}`));
    clock.set(Date.parse('2026-12-04T07:05:30Z'));
    await node('a').tick();
    expect(await runsOf()).toHaveLength(0);
    await dispatcher.handle(inbound('1', `/resume ${schedule.id}`));
    await node('a').tick();
    expect(await runsOf()).toHaveLength(0);
    await dispatcher.handle(inbound('1', '/schedules'));
    const listed = h.channel.sent.at(-1)!;
    expect(listed.text).toMatch(new RegExp(`${schedule.id} · active · .* · next 2026-12-04 07:06 `));
    expect(listed.buttons?.map((b) => b.label)).toEqual(['Pause', 'Run now', 'Delete']);
    const answers: string[] = [];
    await dispatcher.handlePress({
      platform: 'telegram',
      dedupeKey: 'press-1',
      chatId: '1',
      messageId: '77',
      senderId: '1',
      isDirect: true,
      action: 'sched_run',
      arg: schedule.id,
      receivedAt: clock.now(),
      answer: async (text) => void answers.push(text),
    });
    expect(answers).toEqual([`⏰ ${schedule.name} · ${schedule.id} fires within seconds.`]);
    await node('b').tick();
    expect(await runsOf()).toHaveLength(1);
    await settle();
    await dispatcher.handle(inbound('1', `/unschedule ${schedule.id}`));
    expect(await schedules.list()).toHaveLength(0);
    expect(await dispatcher.handle(inbound('1', `/pause ${schedule.id}`))).toEqual({
      kind: 'refused',
      code: 'schedule_unknown',
    });
  });
});
