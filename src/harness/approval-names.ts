/**
 * Names shared by the per-run permission-prompt server (`approval-server.ts`, which starts
 * serving when loaded) and the code that launches claude with it.
 */

/** The MCP server's name in the run's `mcp.json`. */
export const APPROVAL_SERVER_NAME = 'baton';
/** The tool it serves. */
export const APPROVAL_TOOL_NAME = 'approve';
/** The tool as claude names it for `--permission-prompt-tool` (`mcp__<server>__<tool>`). */
export const APPROVAL_PROMPT_TOOL = `mcp__${APPROVAL_SERVER_NAME}__${APPROVAL_TOOL_NAME}`;
/** The server's script, next to this module (`dist/harness/approval-server.js` once built). */
export const APPROVAL_SERVER_SCRIPT = new URL('./approval-server.js', import.meta.url);
