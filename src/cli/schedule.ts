/**
 * `baton schedule add|list|rm|pause|resume`: the schedule commands outside chat. With
 * PostgreSQL they work on the database directly (the service's nodes fire what they find there);
 * with embedded PGlite the running service holds the database, so the chat command is sent to it.
 * A schedule added here has no conversation of its own: it names its chat with `to:`.
 */
import type { ServiceInputs } from '../config/service-inputs.js';
import { systemClock } from '../core/clock.js';
import { BatonError } from '../core/errors.js';
import { changeSchedule, createSchedule, factsOf } from '../dispatch/commands/schedule.js';
import { parseAt, parseEvery } from '../dispatch/schedules/grammar.js';
import { ScheduleStore } from '../store/schedules-repo.js';
import * as words from '../wording/schedules.js';
import { answeredByService, withStore } from './admin.js';
import type { CliCommand } from './command.js';

/** The usage of `baton schedule`. */
export const SCHEDULE_USAGE =
  'Usage: baton schedule add every CRON|PHRASE|at TIME to:PLATFORM:CHAT_ID [options] /codex|/claude|/run TASK | list | rm ID | pause ID | resume ID';

const CHAT_VERBS: Readonly<Record<string, string>> = {
  list: '/schedules',
  rm: '/unschedule',
  pause: '/pause',
  resume: '/resume',
};

/** The chat command `argv` stands for. @throws BatonError `usage` for another shape. */
function chatTextOf(argv: readonly string[]): string {
  const [sub, ...rest] = argv;
  if (sub === 'add' && (rest[0] === 'every' || rest[0] === 'at') && rest.length > 1) return `/${rest.join(' ')}`;
  const verb = sub === undefined ? undefined : CHAT_VERBS[sub];
  if (verb === '/schedules' && rest.length === 0) return verb;
  if (verb && rest.length === 1) return `${verb} ${rest[0]!}`;
  throw new BatonError('usage', SCHEDULE_USAGE);
}

/** `baton schedule …`. @returns the exit code: 0, or 1 when the service answered a refusal. */
export const scheduleCliCommand: CliCommand<ServiceInputs> = async (argv, inputs, out) => {
  const text = chatTextOf(argv);
  const answered = await answeredByService(
    inputs,
    text,
    out,
    (replies) => !replies.some((r) => /^(Usage|No )/.test(r)),
  );
  if (answered !== undefined) return answered;
  return withStore(
    inputs,
    async (runStore) => actOnStore(new ScheduleStore(runStore.database), argv, inputs, out),
    () => {
      out(words.NO_SCHEDULES);
      return argv[0] === 'list' ? 0 : 1;
    },
  );
};

async function actOnStore(
  store: ScheduleStore,
  argv: readonly string[],
  inputs: ServiceInputs,
  out: (text: string) => void,
): Promise<number> {
  const now = systemClock.now();
  const [sub, ...rest] = argv;
  const { config } = inputs;
  if (sub === 'add') {
    const parse = rest[0] === 'every' ? parseEvery : parseAt;
    const request = parse(rest.slice(1).join(' '), now, config.schedules.timezone);
    const row = await createSchedule(store, config, request, { now });
    out(words.scheduleCreatedText(factsOf(row, now)));
    return 0;
  }
  if (sub === 'list') {
    const rows = await store.list();
    if (rows.length === 0) out(words.NO_SCHEDULES);
    for (const row of rows) out(words.scheduleLine(factsOf(row, now, await store.lastFiring(row.id))));
    return 0;
  }
  const verb = sub === 'rm' ? 'unschedule' : sub === 'pause' ? 'pause' : 'resume';
  out(await changeSchedule(store, rest[0]!, verb, now, config.node.name));
  return 0;
}
