import { describe, expect, it } from 'vitest';
import { isBatonError } from '../../../src/core/errors.js';
import { parseAt, parseEvery } from '../../../src/dispatch/schedules/grammar.js';
import { latestDueSlot, nextSlot, type ScheduleWhen } from '../../../src/dispatch/schedules/slots.js';

const cron = (expr: string, timezone: string, until: Date | null = null): ScheduleWhen => ({
  cron: expr,
  runAt: null,
  timezone,
  until,
});

/** The slots after `from`, one after another, as ISO strings. */
function slotsAfter(when: ScheduleWhen, from: string, count: number): string[] {
  const out: string[] = [];
  let after = new Date(from);
  for (let i = 0; i < count; i++) {
    const slot = nextSlot(when, after);
    if (!slot) break;
    out.push(slot.toISOString());
    after = slot;
  }
  return out;
}

describe('schedule slots', () => {
  it('reads a weekday phrase in its zone, skipping the weekend', () => {
    const { when } = parseEvery('weekday 07:00 tz:America/New_York /codex run the tests', new Date(0), 'UTC');
    expect(when.cron).toBe('0 7 * * 1-5');
    // Friday 2026-12-04 20:00 UTC: the next weekday 07:00 in New York (EST, UTC-5) is Monday.
    expect(slotsAfter(when, '2026-12-04T20:00:00Z', 2)).toEqual([
      '2026-12-07T12:00:00.000Z',
      '2026-12-08T12:00:00.000Z',
    ]);
  });

  it('fires a daily slot once on the spring-forward day, at the first valid instant', () => {
    // 2026-03-29 in Berlin: 02:00 CET jumps to 03:00 CEST, so 02:30 does not exist that day.
    const when = cron('30 2 * * *', 'Europe/Berlin');
    expect(slotsAfter(when, '2026-03-28T00:00:00Z', 3)).toEqual([
      '2026-03-28T01:30:00.000Z',
      '2026-03-29T01:00:00.000Z',
      '2026-03-30T00:30:00.000Z',
    ]);
  });

  it('fires a daily slot once on the fall-back day, though its time happens twice', () => {
    // 2026-10-25 in Berlin: 03:00 CEST falls back to 02:00 CET, so 02:30 happens twice.
    const when = cron('30 2 * * *', 'Europe/Berlin');
    expect(slotsAfter(when, '2026-10-24T00:00:00Z', 3)).toEqual([
      '2026-10-24T00:30:00.000Z',
      '2026-10-25T00:30:00.000Z',
      '2026-10-26T01:30:00.000Z',
    ]);
  });

  it('keeps an hourly schedule one hour apart across the fall-back hour', () => {
    const when = cron('0 * * * *', 'Europe/Berlin');
    expect(slotsAfter(when, '2026-10-24T23:30:00Z', 4)).toEqual([
      '2026-10-25T00:00:00.000Z',
      '2026-10-25T01:00:00.000Z',
      '2026-10-25T02:00:00.000Z',
      '2026-10-25T03:00:00.000Z',
    ]);
  });

  it('reads the same cron in two zones as two instants', () => {
    const tokyo = nextSlot(cron('0 9 * * *', 'Asia/Tokyo'), new Date('2026-06-01T00:00:00Z'));
    const lisbon = nextSlot(cron('0 9 * * *', 'Europe/Lisbon'), new Date('2026-06-01T00:00:00Z'));
    expect(tokyo?.toISOString()).toBe('2026-06-02T00:00:00.000Z');
    expect(lisbon?.toISOString()).toBe('2026-06-01T08:00:00.000Z');
  });

  it('stops at until: a date lasts through its day, then no slot is left', () => {
    const now = new Date('2026-12-01T00:00:00Z');
    const { when } = parseEvery('day 18:00 tz:Europe/Paris until:2026-12-03 /run check', now, 'UTC');
    expect(when.until?.toISOString()).toBe('2026-12-03T23:00:00.000Z');
    expect(slotsAfter(when, now.toISOString(), 5)).toEqual([
      '2026-12-01T17:00:00.000Z',
      '2026-12-02T17:00:00.000Z',
      '2026-12-03T17:00:00.000Z',
    ]);
    expect(latestDueSlot(when, new Date('2026-12-10T00:00:00Z'), now)?.toISOString()).toBe('2026-12-03T17:00:00.000Z');
  });

  it('finds only the latest missed slot, and none already fired', () => {
    const when = cron('*/5 * * * *', 'UTC');
    const since = new Date('2026-01-01T00:00:00Z');
    expect(latestDueSlot(when, new Date('2026-01-01T00:23:10Z'), since)?.toISOString()).toBe(
      '2026-01-01T00:20:00.000Z',
    );
    expect(latestDueSlot(when, new Date('2026-01-01T00:20:00Z'), since)?.toISOString()).toBe(
      '2026-01-01T00:20:00.000Z',
    );
    expect(latestDueSlot(when, new Date('2026-01-01T00:23:10Z'), new Date('2026-01-01T00:20:00Z'))).toBeUndefined();
  });

  it('reads /at as a time today or tomorrow, a duration, or a local date and time', () => {
    const now = new Date('2026-12-04T17:30:00Z');
    expect(parseAt('18:00 tz:UTC /codex rebase', now, 'UTC').when.runAt?.toISOString()).toBe(
      '2026-12-04T18:00:00.000Z',
    );
    expect(parseAt('17:00 /codex rebase', now, 'UTC').when.runAt?.toISOString()).toBe('2026-12-05T17:00:00.000Z');
    expect(parseAt('+1h30m /codex rebase', now, 'UTC').when.runAt?.toISOString()).toBe('2026-12-04T19:00:00.000Z');
    expect(parseAt('2026-12-24T09:00 /codex rebase', now, 'Europe/Berlin').when.runAt?.toISOString()).toBe(
      '2026-12-24T08:00:00.000Z',
    );
    const once = parseAt('+30m /run x', now, 'UTC').when;
    expect(nextSlot(once, now)?.toISOString()).toBe('2026-12-04T18:00:00.000Z');
    expect(nextSlot(once, new Date('2026-12-04T18:00:00Z'))).toBeUndefined();
  });
});

describe('schedule grammar', () => {
  const now = new Date('2026-12-04T12:00:00Z');
  const refused = (fn: () => unknown): string => {
    try {
      fn();
    } catch (err) {
      if (isBatonError(err, 'usage')) return err.message;
      throw err;
    }
    throw new Error('not refused');
  };

  it('keeps the schedule options apart from the launch command it repeats', () => {
    const request = parseEvery(
      '0 7 * * 1-5 tz:Europe/Berlin overlap:queue name:nightly to:telegram:42 codex in:app timeout:5 run the tests',
      now,
      'UTC',
    );
    expect(request).toMatchObject({
      when: { cron: '0 7 * * 1-5', timezone: 'Europe/Berlin' },
      overlap: 'queue',
      name: 'nightly',
      to: { platform: 'telegram', chatId: '42' },
      command: '/codex in:app timeout:5 run the tests',
    });
  });

  it('refuses malformed times, zones, options and a missing launch', () => {
    expect(refused(() => parseEvery('0 7 * * /codex x', now, 'UTC'))).toContain('5 fields');
    expect(refused(() => parseEvery('0 0 7 * * 1-5 /codex x', now, 'UTC'))).toContain('5 fields');
    expect(refused(() => parseEvery('61 * * * * /codex x', now, 'UTC'))).toContain('not a valid time');
    expect(refused(() => parseEvery('weekday /codex x', now, 'UTC'))).toContain('needs a time of day');
    expect(refused(() => parseEvery('hour tz:Mars/Base /codex x', now, 'UTC'))).toContain('Unknown time zone');
    expect(refused(() => parseEvery('hour overlap:always /codex x', now, 'UTC'))).toContain('overlap:');
    expect(refused(() => parseEvery('hour until:2020-01-01 /codex x', now, 'UTC'))).toContain('in the past');
    expect(refused(() => parseEvery('hour run-the-tests', now, 'UTC'))).toContain('Usage: /every');
    expect(refused(() => parseAt('+0m /codex x', now, 'UTC'))).toContain('1 minute');
    expect(refused(() => parseAt('2020-01-01T09:00 /codex x', now, 'UTC'))).toContain('passed');
    expect(refused(() => parseAt('tomorrow /codex x', now, 'UTC'))).toContain('Usage: /at');
  });
});
