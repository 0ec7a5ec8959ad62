/**
 * Claude Code's stream-json events in the words the outcome, the live status and the denial list
 * use: tool milestones, API retries, denied calls and failed results.
 */
import type { DenialJson } from '../../store/schema.js';

/** Longest tool input echoed in a permission-denial notice, in characters. */
const MAX_DENIAL_DETAIL_CHARS = 160;

/** A milestone for tools that change things or reach outside the repo; reads and searches are not worth one. */
export function describeToolUse(name: string, input: Record<string, unknown>): string | undefined {
  const field = (key: string): string | undefined => {
    const value = input[key];
    return typeof value === 'string' ? truncate(oneLine(value), 80) : undefined;
  };
  const command = field('command');
  const path = field('file_path') ?? field('notebook_path');
  switch (name) {
    case 'Bash':
      return command && `running ${command}`;
    case 'Write':
      return path && `writing ${path}`;
    case 'Edit':
    case 'MultiEdit':
    case 'NotebookEdit':
      return path && `editing ${path}`;
    case 'WebSearch': {
      const query = field('query');
      return query && `searched the web for ${query}`;
    }
    case 'WebFetch': {
      const url = field('url');
      return url && `fetching ${url}`;
    }
    case 'Task':
    case 'Agent': {
      const description = field('description');
      return description ? `started a sub-agent: ${description}` : 'started a sub-agent';
    }
    default: {
      // MCP tools are named `mcp__<server>__<tool>`.
      const mcp = /^mcp__(.+?)__(.+)$/.exec(name);
      return mcp ? `tool ${mcp[1] ?? ''}/${mcp[2] ?? ''}` : undefined;
    }
  }
}

/** A `system/api_retry` event as a notice: `API retry 2/10: 529 overloaded_error` (parts it lacks left out). */
export function describeRetry(event: Record<string, unknown>): string {
  const attempt = typeof event['attempt'] === 'number' ? String(event['attempt']) : '?';
  const max = typeof event['max_retries'] === 'number' ? `/${event['max_retries']}` : '';
  const status = typeof event['error_status'] === 'number' ? ` ${event['error_status']}` : '';
  const error = typeof event['error'] === 'string' ? ` ${event['error']}` : '';
  return `API retry ${attempt}${max}:${status}${error}`.replace(/:$/, '');
}

/** A denied call as the owner reads it: the tool, and its command, path or URL cut to one line. */
export function describeDenial(tool: string | undefined, input: Record<string, unknown> | undefined): DenialJson {
  const fields = input ?? {};
  const detail = [
    fields['command'],
    fields['file_path'],
    fields['notebook_path'],
    fields['path'],
    fields['url'],
    fields['pattern'],
  ].find((v): v is string => typeof v === 'string');
  const denial: DenialJson = { tool: tool ?? 'a tool' };
  if (detail !== undefined) denial.detail = truncate(oneLine(detail), MAX_DENIAL_DETAIL_CHARS);
  return denial;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function truncate(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : `${text.slice(0, maxChars - 1)}…`;
}

/** The non-blank strings of a result's `errors`, joined with `; `; undefined when there are none. */
export function joinErrors(raw: unknown): string | undefined {
  if (!Array.isArray(raw)) return undefined;
  const errors = raw.filter((e): e is string => typeof e === 'string' && e.trim() !== '');
  return errors.length > 0 ? errors.join('; ') : undefined;
}

/** Words for a failed result that carried neither `result` text nor `errors` (the subtypes claude 2.1.197 emits). */
export function describeSubtype(subtype: string | undefined, isError: unknown): string {
  switch (subtype) {
    case 'error_max_turns':
      return 'claude stopped: it reached the maximum number of turns.';
    case 'error_max_budget_usd':
      return 'claude stopped: it reached the maximum budget.';
    case 'error_during_execution':
      return 'claude stopped with an error during execution.';
    case undefined:
    case 'success':
      return typeof isError === 'boolean'
        ? 'claude reported an error without a message.'
        : 'claude printed a result without is_error.';
    default:
      return `claude ended with ${subtype}.`;
  }
}

/** A JSON object (not an array, not null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
