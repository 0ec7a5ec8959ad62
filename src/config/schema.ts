/**
 * The zod schema of `config.toml` and the key table derived from it. The schema
 * validates the file as written (snake_case keys, the units the file uses); `resolve.ts` turns
 * its output into the {@link BatonConfig} the rest of baton reads.
 */
import { z } from 'zod';
import { VENDOR_NAMES, type VendorName } from '../core/vendor-name.js';
import { DEFAULT_PASS_ENV, PASS_ENV_ENTRY } from '../core/pass-env.js';
import { DEFAULT_VERIFY_TIMEOUT_MINUTES, projectTableOf } from './projects-schema.js';
import { consoleSection } from './console-schema.js';
import { type ConfigKeyDoc, documented, keyDoc, sectionDocs } from './key-docs.js';
import { schedulesSection } from './schedules-schema.js';
import { voiceSectionOf } from './voice-schema.js';

export { VENDOR_NAMES, type VendorName } from '../core/vendor-name.js';

/** Longest wall-clock timeout a run may have, as default or per run (`timeout:MINUTES`). Fixed. */
export const MAX_TIMEOUT_MINUTES = 240;

export { DEFAULT_VERIFY_TIMEOUT_MINUTES };

/**
 * Largest allowed `prompt_argv_max_kb` (KiB), a key no longer used (every task goes on stdin now)
 * and still validated as it was, so a config file that set it loads unchanged.
 */
export const PROMPT_ARGV_MAX_KB_CAP = 120;

/** Pattern of a `[projects]` alias name (usable as `in:NAME`). */
export const PROJECT_ALIAS_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** The channel sections under `[channels]`, in the order they are documented. */
export const CHANNEL_PLATFORMS = ['telegram', 'slack', 'discord'] as const;
/** A platform that has a `[channels.*]` section. */
export type ChannelPlatform = (typeof CHANNEL_PLATFORMS)[number];

/** An integer in `[min, max]`; TOML integers arrive as numbers (bigint only past 2^53). */
function int(min: number, max: number) {
  return z.number().int().min(min).max(max);
}

/** The range of an integer key, and its unit (`minutes`, `KiB`…) when it has one. */
interface IntegerRange {
  unit?: string;
  min: number;
  max: number;
}

/** A key holding an integer in `[min, max]`, `default` when unset; its type reads `integer UNIT, MIN to MAX`. */
function integerKey(range: IntegerRange & { default: number }, description: string) {
  return documented(int(range.min, range.max).default(range.default), integerType(range), description);
}

/** As {@link integerKey}, for a key that stays unset when the file sets none. */
function optionalIntegerKey(range: IntegerRange, description: string) {
  return documented(int(range.min, range.max).optional(), integerType(range), description);
}

/** `integer UNIT, MIN to MAX` (no unit: `integer, MIN to MAX`), as errors and the reference show it. */
function integerType({ unit, min, max }: IntegerRange): string {
  return `integer${unit === undefined ? '' : ` ${unit}`}, ${min} to ${max}`;
}

/** A boolean key, `fallback` when unset. */
function booleanKey(fallback: boolean, description: string) {
  return documented(z.boolean().default(fallback), 'boolean', description);
}

/** A filesystem path as written: `~`, `~/…`, absolute, or relative to the config file. */
const pathString = z
  .string()
  .min(1)
  .refine((p) => !p.includes('\0'), 'contains a NUL character')
  .refine((p) => !/^~[^/]/.test(p), 'only "~" and "~/…" are expanded; "~user" is not supported');

/**
 * A platform user id: a TOML string, or a non-negative integer (people paste Telegram ids as
 * numbers; integers past 2^53, such as Discord snowflakes, arrive as bigint and stay exact).
 * Always normalized to a string.
 */
const userId = z.union([z.string(), z.number(), z.bigint()]).transform((value, ctx): string => {
  if (typeof value === 'bigint') {
    if (value >= 0n) return value.toString();
  } else if (typeof value === 'number') {
    if (Number.isSafeInteger(value) && value >= 0) return String(value);
  } else {
    const trimmed = value.trim();
    if (trimmed !== '' && !/\s/.test(trimmed)) return trimmed;
    ctx.addIssue({ code: 'custom', message: trimmed === '' ? 'is empty' : 'contains whitespace' });
    return z.NEVER;
  }
  ctx.addIssue({ code: 'custom', message: `${String(value)} is not a whole non-negative number` });
  return z.NEVER;
});

/** A key holding one path ({@link pathString}), unset when the file sets none. */
function optionalPathKey(description: string) {
  return documented(pathString.optional(), 'path', description);
}

const USER_ID_TYPE = 'user id: string, or non-negative integer';

const harnessSection = z.strictObject({
  enabled: booleanKey(true, 'Master switch for coding runs; false removes the run commands entirely.'),
  approved: booleanKey(
    false,
    'One-time owner consent that chat may start coding agents on this machine; set by `baton approve` or by hand, never by chat.',
  ),
  default_vendor: documented(
    z.enum(VENDOR_NAMES).default('codex'),
    '"codex" or "claude"',
    'Vendor CLI that `/run` launches; anything other than "codex" or "claude" (even "") refuses start.',
  ),
  max_active: integerKey(
    { min: 1, max: 1000, default: 2 },
    'Most runs active at once on this machine, enforced atomically in the database.',
  ),
  queue: booleanKey(
    true,
    'A run whose worktree is busy or that finds max_active runs active waits as queued and starts when its slot frees, in order, on any baton process; false refuses it instead.',
  ),
  max_queued: integerKey(
    { min: 1, max: 1000, default: 5 },
    'Most runs one conversation may have queued at once; one more is refused (queue_full).',
  ),
  on_quota: documented(
    z.enum(['queue', 'refuse']).default('queue'),
    '"queue" or "refuse"',
    'While a vendor is known to be at its plan\'s usage limit (a run of it ended quota_exhausted with a reset time), a new run of it: "queue" waits queued until the reset, "refuse" is refused with the reset time.',
  ),
  quota_warn_percent: integerKey(
    { min: 1, max: 100, default: 80 },
    "Share of a plan window (claude's 5-hour or weekly one, as its stream reports it under a subscription login) at which the owner is warned, once per window period.",
  ),
  default_timeout_minutes: integerKey(
    { unit: 'minutes', min: 1, max: MAX_TIMEOUT_MINUTES, default: 30 },
    `Wall-clock limit of a run in minutes unless it asks for another with timeout:MINUTES (at most ${MAX_TIMEOUT_MINUTES}); past it the run is killed as failed/timeout.`,
  ),
  default_budget_usd: documented(
    z.number().gt(0).max(10_000).optional(),
    'number US dollars, above 0, at most 10000',
    'Most a claude run may spend in US dollars unless it asks for another with budget:USD (claude --max-budget-usd; past it the run ends failed/budget_exceeded). codex reports no cost, so it does not apply there; cap codex with default_max_tokens. Unset: no cap.',
  ),
  default_max_turns: optionalIntegerKey(
    { min: 1, max: 10_000 },
    'Most agent turns of a claude run unless it asks for another with turns:N (claude --max-turns; past it the run ends failed/max_turns). codex has no turn limit. Unset: no cap.',
  ),
  default_max_tokens: optionalIntegerKey(
    { unit: 'tokens', min: 1, max: 10_000_000_000 },
    'Most tokens (input + output, as the CLI reports them) a run may use unless it asks for another with tokens:N; checked whenever the CLI reports usage (codex: when its turn ends, claude: at each result) and past it the run is stopped as failed/budget_exceeded. Unset: no cap.',
  ),
  first_event_seconds: integerKey(
    { unit: 'seconds', min: 1, max: MAX_TIMEOUT_MINUTES * 60, default: 120 },
    'Seconds without any vendor event after launch before an advisory notice (often auth or config trouble); the run continues.',
  ),
  finish_grace_seconds: integerKey(
    { unit: 'seconds', min: 1, max: 600, default: 10 },
    "Seconds a vendor CLI may take to exit after its terminal event (codex turn.completed/turn.failed, claude's last result) before baton stops it and judges the run from that event.",
  ),
  inactivity_minutes: integerKey(
    { unit: 'minutes', min: 1, max: MAX_TIMEOUT_MINUTES, default: 10 },
    'Minutes of silence from a running vendor before an advisory notice; the run continues.',
  ),
  approval_timeout_minutes: documented(
    z.number().gt(0).max(MAX_TIMEOUT_MINUTES).default(10),
    `number of minutes, more than 0, at most ${MAX_TIMEOUT_MINUTES} (fractions allowed)`,
    "Minutes a tool approval waits for the owner's Allow or Deny (claude runs with mode:default or approve); no answer by then denies the call, and the chat says so.",
  ),
  prompt_argv_max_kb: integerKey(
    { unit: 'KiB', min: 1, max: PROMPT_ARGV_MAX_KB_CAP, default: 100 },
    'No longer used: every task goes to the CLI on stdin, never on its command line. Still accepted, so a config file that sets it loads.',
  ),
  max_attachment_mb: integerKey(
    { unit: 'MiB', min: 1, max: 2048, default: 20 },
    "Largest file that can go with a task (a screenshot, a log), in MiB; 20 is Telegram's Bot API download limit. At most 10 files per task.",
  ),
  max_image_pixels: integerKey(
    { unit: 'pixels', min: 1, max: 1_000_000_000, default: 50_000_000 },
    'Largest image (width × height, read from its header) that can go with a task; a larger one is refused by name before any CLI decodes it, since a CLI holds the whole decoded image in memory (a few bytes a pixel, however small the file). The default, 50 megapixels, passes a 48-megapixel phone photo and an 8K screenshot.',
  ),
  max_patch_kb: integerKey(
    { unit: 'KiB', min: 1, max: 1_048_576, default: 1024 },
    "Largest diff, in KiB, sent as a run's hr_….patch file; over it the outcome says so and carries the diff stat only.",
  ),
  max_event_bytes: integerKey(
    { unit: 'bytes', min: 1024, max: 2 ** 30, default: 1_048_576 },
    'Largest vendor event (one JSON line), in bytes, held in memory; a longer line is written to the run directory as it arrives and read once it ends (a long final answer still arrives, as result.md), unless it passes max_run_artifact_mb: then it is left out, counted as a framing error, and the outcome names the file holding its start.',
  ),
  max_framing_errors: integerKey(
    { min: 0, max: 1_000_000, default: 20 },
    'Malformed or oversized vendor lines tolerated before the run is killed as failed/protocol; 0 means none.',
  ),
  max_run_artifact_mb: integerKey(
    { unit: 'MiB', min: 1, max: 1_048_576, default: 64 },
    "Cap in MiB on one run's events.jsonl spool; past it spooling stops, the run is flagged artifact_truncated and continues.",
  ),
  artifact_quota_gb: documented(
    z.number().gt(0).max(1_048_576).default(5),
    'number GiB, above 0',
    'Cap in GiB on all run artifacts together; while it is exceeded new runs are refused.',
  ),
  min_free_gb: documented(
    z.number().min(0).max(1_048_576).default(2),
    'number GiB, 0 or more',
    'Free disk space in GiB that must remain for a run to launch; 0 disables the probe.',
  ),
  artifact_retention_days: integerKey(
    { unit: 'days', min: 1, max: 36_500, default: 30 },
    'Days a run directory is kept; older ones are swept at start and daily.',
  ),
  delivery_max_attempts: integerKey(
    { min: 1, max: 1_000_000, default: 20 },
    'Send attempts for one outbound message before it is dead-lettered (kept, never sent).',
  ),
  delivery_max_age_hours: integerKey(
    { unit: 'hours', min: 1, max: 87_600, default: 24 },
    'Hours an outbound message may stay unsent before it is dead-lettered.',
  ),
  pass_env: documented(
    z
      .array(z.string().regex(PASS_ENV_ENTRY, 'an environment variable name, or a prefix ending in *'))
      .default([...DEFAULT_PASS_ENV]),
    'array of names',
    `Service environment names also given to each run's CLI when set (values are never shown); NAME* matches a prefix but never a name that looks secret, which passes only when listed exactly; service secrets (DATABASE_URL, chat tokens) never pass. Default: the proxy, CA-bundle and locale names ${DEFAULT_PASS_ENV.join(', ')}.`,
  ),
  paste_join_ms: integerKey(
    { unit: 'ms', min: 0, max: 60_000, default: 1500 },
    "Milliseconds to wait, after a message that reaches the platform's length limit (a paste the client split, Telegram 4096), for the same sender's next parts in that conversation; they are joined into one task. 0 joins nothing.",
  ),
  status_edit_seconds: integerKey(
    { unit: 'seconds', min: 0, max: 3600, default: 5 },
    "Least time between two edits of the live status message (a run's started message, edited in place) in one conversation, in seconds; 0 turns the live status off.",
  ),
  codex_transport: documented(
    z.enum(['app-server', 'exec']).default('app-server'),
    '"app-server" or "exec"',
    'How codex runs are driven: "app-server" (codex app-server, JSON-RPC over stdio; marked experimental upstream) can ask for tool approvals, "exec" (codex exec --json) cannot. Both take the same flags, posture and defences.',
  ),
  codex_home: optionalPathKey(
    "CODEX_HOME given to codex runs (its config and login); unset: the service's CODEX_HOME, else codex's default.",
  ),
  claude_config_dir: optionalPathKey(
    "CLAUDE_CONFIG_DIR given to claude runs (its config, login and sessions); unset: the service's CLAUDE_CONFIG_DIR, else claude's default.",
  ),
});

const workspaceSection = z.strictObject({
  roots: documented(
    z.array(pathString).default([]),
    'array of paths',
    'Directories runs may use (symlinks are followed at launch); `baton grant path DIR` appends one. Empty: no run can launch.',
    'path',
  ),
  default: optionalPathKey(
    'Working directory of a run that names none and whose conversation set none with /use; must lie inside a root.',
  ),
  worktrees: documented(
    z.enum(['off', 'per-run']).default('off'),
    '"off" or "per-run"',
    '"per-run": every run in a git checkout gets its own worktree on a new branch baton/<run id> under $BATON_HOME/worktrees (so runs on one repository go in parallel); "off": only runs that ask with the worktree option do.',
  ),
  worktree_retention_days: integerKey(
    { unit: 'days', min: 1, max: 36_500, default: 7 },
    "Days a finished run's worktree is kept; merged ones go sooner. Swept at start and daily (and by `baton worktrees prune`); a branch with unmerged commits is kept and said so, a worktree with uncommitted changes is kept.",
  ),
});

const nodeSection = z.strictObject({
  name: documented(
    z
      .string()
      .regex(
        /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/,
        'letters, digits, "_", "." or "-", starting with a letter or digit, at most 63',
      )
      .optional(),
    'string',
    "This baton process's node name in a fleet sharing one PostgreSQL database; unset: the host name. Shown by /runs, doctor and /health/ready.",
  ),
  heartbeat_seconds: integerKey(
    { unit: 'seconds', min: 1, max: 60, default: 5 },
    'How often this node writes its heartbeat to the database.',
  ),
  dead_after_seconds: integerKey(
    { unit: 'seconds', min: 3, max: 3600, default: 20 },
    'A node whose last heartbeat is older than this is shown as dead.',
  ),
  fleet_max_active: integerKey(
    { min: 0, max: 1000, default: 0 },
    'Most coding runs active at once across all nodes sharing the database, checked by this node whenever it starts one (beside its own [harness] max_active); 0: no fleet-wide cap. Give every node the same value.',
  ),
});

const projectTable = projectTableOf({ documented, integerKey, pathString, maxTimeoutMinutes: MAX_TIMEOUT_MINUTES });

/** The shape of one `[projects.NAME]` table after validation. */
export type ProjectTable = z.output<typeof projectTable>;

const projectsSection = documented(
  z.record(z.string().regex(PROJECT_ALIAS_PATTERN), z.union([pathString, projectTable])).default({}),
  'path',
  'An alias usable as in:NAME or /use NAME, mapped to a directory; names start with a letter or digit, then letters, digits, "_", "." or "-". "NODE:PATH" (e.g. "buildbox:~/code/app") names a directory on another node of the fleet, which resolves PATH against its own roots and home.',
);

const channelSection = z.strictObject({
  owner_user_id: documented(
    userId.optional(),
    USER_ID_TYPE,
    'Platform user id of the one person who may launch and stop runs from this platform; if absent and exactly one allowed user is listed, that user is the owner.',
  ),
  allowed_user_ids: documented(
    z.array(userId).default([]),
    'array of user ids',
    'Platform user ids of guests, who may read (/runs, /help, /whoami) but never launch or stop; the owner is always allowed.',
    USER_ID_TYPE,
  ),
});

const chatSection = z.strictObject({
  plain_messages: documented(
    z.enum(['converse', 'commands']).default('converse'),
    '"converse" or "commands"',
    '"converse": the owner\'s plain message in a direct message (or mentioning the bot) continues the conversation: it goes to the conversation\'s active run, else resumes its current session, else starts a run with default_vendor (/new starts afresh); "commands": only commands and replies to [run …] messages act.',
  ),
});

const channelsSection = z.strictObject({
  telegram: channelSection.optional(),
  slack: channelSection.optional(),
  discord: channelSection.optional(),
});

const voiceSection = voiceSectionOf({ documented, integerKey, booleanKey });

/**
 * The schema of `config.toml`. Every table is strict (an unknown key refuses); every key is
 * optional and takes the default shown in {@link CONFIG_KEYS}. Parse TOML with smol-toml's
 * `integersAsBigInt: 'asNeeded'` so large ids stay exact.
 */
export const configFileSchema = z.strictObject({
  harness: harnessSection.prefault({}),
  workspace: workspaceSection.prefault({}),
  node: nodeSection.prefault({}),
  schedules: schedulesSection.prefault({}),
  console: consoleSection.prefault({}),
  projects: projectsSection,
  chat: chatSection.prefault({}),
  channels: channelsSection.prefault({}),
  voice: voiceSection.optional(),
});

/** `config.toml` after validation: snake_case keys, defaults filled in, paths not yet resolved. */
export type ConfigFile = z.output<typeof configFileSchema>;

export type { ConfigKeyDoc };

/** Every key of `config.toml`, in file order, derived from {@link configFileSchema}. */
export const CONFIG_KEYS: readonly ConfigKeyDoc[] = [
  ...sectionDocs('harness', harnessSection.shape),
  ...sectionDocs('workspace', workspaceSection.shape),
  ...sectionDocs('node', nodeSection.shape),
  ...sectionDocs('schedules', schedulesSection.shape),
  ...sectionDocs('console', consoleSection.shape),
  keyDoc('projects', '<alias>', projectsSection),
  ...sectionDocs('projects.<alias>', projectTable.shape),
  ...sectionDocs('chat', chatSection.shape),
  ...CHANNEL_PLATFORMS.flatMap((p) => sectionDocs(`channels.${p}`, channelSection.shape)),
  ...sectionDocs('voice', voiceSection.shape),
];

/** The top-level tables of `config.toml`, in file order. */
export const CONFIG_SECTIONS = [
  'harness',
  'workspace',
  'node',
  'schedules',
  'console',
  'projects',
  'chat',
  'channels',
  'voice',
] as const;
