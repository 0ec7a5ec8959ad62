/**
 * The commented starter `config.toml` written on first start, and the atomic, never-overwriting
 * writer for it. The template must stay loadable (a unit test loads it) and mention every key.
 */
import { randomBytes } from 'node:crypto';
import { chmod, link, mkdir, open, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

/** Text of the starter `config.toml`: every key with its default or a commented-out example. */
export const CONFIG_TEMPLATE = `# baton configuration. Read at start: restart baton after editing, except [harness] approved
# and [workspace] roots (what \`baton approve\` and \`baton grant\` set), which apply on the next command.
# Every key is optional; the values shown are the defaults. An unknown key or a bad value
# refuses start with a message naming the key.
# Paths may start with "~" (your home directory); relative paths are relative to this file.
# Secrets (bot tokens, DATABASE_URL) do not belong here: put them in the environment or .env.

[harness]
# Master switch for coding runs; false removes the run commands entirely.
enabled = true
# One-time consent that chat may start coding agents on this machine.
# Set by \`baton approve\` or by hand; nothing said in chat can change it.
approved = false
# Vendor CLI that /run launches: "codex" or "claude" (anything else refuses start).
default_vendor = "codex"
# Most runs active at once on this machine.
max_active = 2
# A run whose checkout (or worktree) is busy, or that finds max_active runs active, waits as
# queued and starts when its slot frees; false refuses it instead. At most max_queued queued
# runs per conversation.
queue = true
max_queued = 5
# While a CLI is at its plan's usage limit (a run ended quota_exhausted with a reset time), a new
# run of it waits queued until the reset ("queue") or is refused ("refuse").
on_quota = "queue"
# Warn once per window period when a plan window (claude reports them) is this full, in percent.
quota_warn_percent = 80
# Wall-clock limit of a run, in minutes; a run may ask for up to 240 with timeout:MINUTES.
default_timeout_minutes = 30
# Spending caps of a run that asks for none (budget:USD, turns:N, tokens:N). Unset: no cap.
# claude: US dollars (--max-budget-usd) and turns (--max-turns); codex reports no cost and has
# no turn limit, so only the token cap (input + output tokens) applies to it.
# default_budget_usd = 2.0
# default_max_turns = 50
# default_max_tokens = 2000000
# Seconds without any vendor event after launch before an advisory notice (often auth or
# config trouble). The run continues.
first_event_seconds = 120
# Seconds a CLI may take to exit after it reported its outcome; then baton stops it and
# judges the run from that outcome.
finish_grace_seconds = 10
# Minutes of silence from a running vendor before an advisory notice. The run continues.
inactivity_minutes = 10
# Minutes a tool approval (claude with mode:default or approve) waits for your Allow or Deny in
# the chat; no answer by then denies the call. Fractions are allowed.
approval_timeout_minutes = 10
# No longer used: every task goes to the CLI on stdin. Still accepted in an older file.
# prompt_argv_max_kb = 100
# Largest file, in MiB, that can go with a task (a screenshot, a log file); at most 10 per task.
max_attachment_mb = 20
# Largest image, in pixels (width × height, read from its header), that can go with a task;
# a CLI decodes the whole image into memory, so a small file can still be too big.
max_image_pixels = 50000000
# Largest diff, in KiB, sent as the run's hr_….patch file; over it only the diff stat is sent.
max_patch_kb = 1024
# Largest vendor event (one JSON line) held in memory, in bytes; a longer one goes to the run
# directory as it arrives and is read from there (up to max_run_artifact_mb; past that it is a
# framing error).
max_event_bytes = 1048576
# Malformed or oversized vendor lines tolerated before the run fails (failed/protocol);
# 0 = zero tolerance.
max_framing_errors = 20
# Cap on one run's events.jsonl, in MiB; past it spooling stops and the run continues.
max_run_artifact_mb = 64
# Cap on all run artifacts together, in GiB; while exceeded, new runs are refused.
artifact_quota_gb = 5
# Free disk space, in GiB, that must remain for a run to launch; 0 disables the check.
min_free_gb = 2
# Days a run directory ($BATON_HOME/harness/runs/<id>) is kept.
artifact_retention_days = 30
# Send attempts for one chat message before it is dead-lettered (kept, never sent).
delivery_max_attempts = 20
# Hours a chat message may stay unsent before it is dead-lettered.
delivery_max_age_hours = 24
# Service environment names also given to each run's CLI when set (values are never shown;
# baton doctor lists the names). NAME* matches a prefix but never a secret-looking name; list
# a secret by its exact name to pass it. Service secrets (DATABASE_URL, chat tokens) never pass.
# The default: the proxy, CA-bundle and locale names.
# pass_env = ["HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "LANG", "LANGUAGE", "LC_*"]
# Milliseconds to wait for the rest of a long paste the chat app split into several messages.
paste_join_ms = 1500
# Least seconds between two edits of a run's live status message in one conversation (the
# started message, edited in place); 0 turns the live status off.
status_edit_seconds = 5
# How codex runs are driven: "app-server" (codex app-server; experimental upstream; runs can ask
# for tool approvals) or "exec" (codex exec --json; no approvals).
# codex_transport = "app-server"
# CODEX_HOME for codex runs (config and login). Unset: the service's CODEX_HOME, else ~/.codex.
# codex_home = "~/.codex"
# CLAUDE_CONFIG_DIR for claude runs (config, login, sessions). Unset: the service's
# CLAUDE_CONFIG_DIR, else ~/.claude.
# claude_config_dir = "~/.claude"

[workspace]
# Directories runs may work in (symlinks are followed at launch). While this is empty no
# run can launch: add one here or with \`baton grant path DIR\`.
roots = []                     # for example: roots = ["~/code"]
# Working directory of a run that names none (and whose chat set none with /use);
# must lie inside a root.
# default = "~/code/app"
# "per-run": every run in a git checkout gets its own worktree on a new branch baton/<run id>
# under $BATON_HOME/worktrees, so several runs work on one repository at once. "off": only
# runs that ask with the worktree option do.
worktrees = "off"
# Days a finished run's worktree is kept (merged ones go sooner); unmerged branches and
# uncommitted changes are kept and reported. \`baton worktrees\` lists them.
worktree_retention_days = 7

[node]
# This process's name in a fleet of baton services sharing one PostgreSQL database (see
# docs/fleet.md). Unset: the host name.
# name = "buildbox"
# How often this node writes its heartbeat, and when a silent node counts as dead, in seconds.
heartbeat_seconds = 5
dead_after_seconds = 20
# Most runs active at once across every node sharing the database (beside each node's own
# [harness] max_active); 0: no fleet-wide cap. Give every node the same value.
fleet_max_active = 0

[schedules]
# The time zone of /every and /at times that name none (tz:Area/City). Unset: this machine's.
# timezone = "Europe/Berlin"
# Slots missed while every node was down: "one" fires the latest of them once, late, and says
# by how much; "none" fires none of them.
catch_up = "one"
[console]
# The web console (baton console prints its login link) is served on 127.0.0.1. One more
# address, HOST:PORT, behind the same login (docs/console.md):
# listen = "192.168.1.5:8443"

[projects]
# Aliases usable as in:NAME or /use NAME. A name starts with a letter or digit, then
# letters, digits, "_", "." or "-". "NODE:PATH" names a directory on another node of the
# fleet (that node resolves PATH, "~" being its home).
# app = "~/code/app"
# lib = "buildbox:~/code/lib"
# A project as a table also names the commands that verify a run in it once its agent
# completed, in order (the outcome then says verified or verification failed, with a Fix
# button; see docs/pull-requests.md), and their time limit in minutes. Only this file and the
# owner's verify:"CMD" option set them, never the repository.
# [projects.api]
# path = "~/code/api"
# verify = ["npm test", "npm run lint"]
# verify_timeout_minutes = 15

[chat]
# "converse": your plain message in a direct message (or naming the bot) goes to the
# conversation's active run, else resumes its latest run, else starts one with default_vendor;
# /new starts afresh. "commands": only commands and replies to [run …] messages act.
plain_messages = "converse"

# Who may use the bot, per platform. The owner launches and stops runs; guests listed in
# allowed_user_ids may only read (/runs, /help, /whoami). If owner_user_id is absent and
# exactly one allowed user is listed, that user is the owner. Ask the bot /whoami for ids.
# Bot tokens go in the environment (TELEGRAM_BOT_TOKEN, SLACK_BOT_TOKEN, DISCORD_BOT_TOKEN).

# [channels.telegram]
# owner_user_id = "123456789"
# allowed_user_ids = ["987654321"]

# [channels.slack]
# owner_user_id = "U0123ABCDEF"
# allowed_user_ids = []

# [channels.discord]
# owner_user_id = "123456789012345678"
# allowed_user_ids = []

# Voice notes from the owner, transcribed by an OpenAI-compatible endpoint (see docs/voice.md):
# baton posts them to URL/audio/transcriptions. The key's variable goes in $BATON_HOME/.env.
# [voice]
# url = "http://127.0.0.1:8080/v1"
# model = "whisper-1"
# key_env = "OPENAI_API_KEY"
# language = "en"
# max_seconds = 300
# max_mb = 25
# timeout_seconds = 60
# confirm = true
`;

/**
 * Writes {@link CONFIG_TEMPLATE} to `configPath` unless a file already exists there. The file is
 * created with mode 0600 and appears complete or not at all (written to a temporary file in the
 * same directory, then hard-linked into place, which fails rather than replaces). A parent
 * directory that has to be created gets mode 0700; an existing one is left as it is.
 *
 * @returns true when the file was written, false when one already existed.
 * @throws Error (errno) when the directory or the file cannot be created.
 */
export async function ensureConfigFile(configPath: string): Promise<boolean> {
  const file = path.resolve(configPath);
  const dir = path.dirname(file);
  const created = await mkdir(dir, { recursive: true, mode: 0o700 });
  if (created !== undefined) await chmod(dir, 0o700);
  const temp = path.join(dir, `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', 0o600);
  await writeTemplateTo(handle);
  try {
    await link(temp, file);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== undefined && NO_HARD_LINKS.has(code)) return writeExclusive(file);
    throw err;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

/** Writes the template through an open handle (0600, synced to disk) and closes it. */
async function writeTemplateTo(handle: FileHandle): Promise<void> {
  try {
    await handle.chmod(0o600);
    await handle.writeFile(CONFIG_TEMPLATE, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** errno codes of filesystems that cannot hard-link (some FUSE and network mounts). */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

/** Fallback without hard links: exclusive create still never overwrites, though not atomic. */
async function writeExclusive(file: string): Promise<boolean> {
  let handle;
  try {
    handle = await open(file, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  await writeTemplateTo(handle);
  return true;
}
