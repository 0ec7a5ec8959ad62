/**
 * codex app-server's approval requests as baton's tool approvals, and baton's verdict as codex's
 * answer (codex-cli 0.171.0 protocol, generated types beside this file):
 *
 * - `item/commandExecution/requestApproval` → `Bash` with the command as the model wrote it
 *   (codex's `/bin/bash -lc '…'` wrapper removed), prefixed `cd DIR &&` when it runs elsewhere
 *   than the run's directory, so a rule covers only what the owner saw. Input to a running
 *   terminal or a command the user typed (`kind` other than `command`), a managed-network prompt
 *   (`networkApprovalContext`: codex asks for a host) and a request naming no command always ask
 *   (`Permissions`).
 * - `item/fileChange/requestApproval` → `ApplyPatch` with the paths, kinds and diffs of the
 *   patch (a move's destination as `movePath`; from the item's `item/started`, which codex sends
 *   first) and any `grantRoot`.
 * - `item/permissions/requestApproval` → `Permissions` (always asks).
 *
 * Allow answers `accept`, never `acceptForSession`: "Allow for this run" is baton's own rule,
 * checked per call, so codex never widens it by caching a decision of its own.
 */
import { shellQuote } from '../../shell-quote.js';
import { unwrapShell } from '../codex.js';
import type { SessionRequest, ToolApprovalAsk } from '../types.js';
import type { CommandExecutionRequestApprovalParams } from './protocol/v2/CommandExecutionRequestApprovalParams.js';
import type { CommandExecutionRequestApprovalResponse } from './protocol/v2/CommandExecutionRequestApprovalResponse.js';
import type { FileChangeRequestApprovalParams } from './protocol/v2/FileChangeRequestApprovalParams.js';
import type { FileChangeRequestApprovalResponse } from './protocol/v2/FileChangeRequestApprovalResponse.js';
import type { FileUpdateChange } from './protocol/v2/FileUpdateChange.js';
import type { GrantedPermissionProfile } from './protocol/v2/GrantedPermissionProfile.js';
import type { PermissionsRequestApprovalParams } from './protocol/v2/PermissionsRequestApprovalParams.js';
import type { PermissionsRequestApprovalResponse } from './protocol/v2/PermissionsRequestApprovalResponse.js';

/** The approval methods of the protocol. */
export const APPROVAL_METHODS: ReadonlySet<string> = new Set([
  'item/commandExecution/requestApproval',
  'item/fileChange/requestApproval',
  'item/permissions/requestApproval',
]);

/**
 * The tool approval one codex request asks for.
 *
 * @param patches the changes of each `fileChange` item seen so far, by item id.
 * @param cwd the run's directory.
 */
export function approvalAsk(
  request: SessionRequest,
  patches: ReadonlyMap<string, readonly FileUpdateChange[]>,
  cwd: string,
): ToolApprovalAsk {
  const params = (typeof request.params === 'object' && request.params !== null ? request.params : {}) as Record<
    string,
    unknown
  >;
  // The JSON-RPC id is unique on the connection; the item id names the call in the logs.
  const requestId = `${String(params['itemId'] ?? '')}#${String(request.id)}`;
  if (request.method === 'item/commandExecution/requestApproval') {
    const p = params as Partial<CommandExecutionRequestApprovalParams>;
    if (p.kind !== undefined && p.kind !== 'command') return { requestId, tool: 'Permissions', input: params };
    // A managed-network prompt asks for a host, not for the command: a rule covering the command
    // must never grant it. A request naming no command has nothing a rule could cover either.
    if ((p.networkApprovalContext !== undefined && p.networkApprovalContext !== null) || typeof p.command !== 'string')
      return { requestId, tool: 'Permissions', input: params };
    const command = unwrapShell(p.command);
    const where = typeof p.cwd === 'string' && p.cwd !== cwd ? `cd ${shellQuote(p.cwd)} && ` : '';
    return {
      requestId,
      tool: 'Bash',
      input: { command: `${where}${command}`, ...(typeof p.reason === 'string' ? { description: p.reason } : {}) },
    };
  }
  if (request.method === 'item/fileChange/requestApproval') {
    const p = params as Partial<FileChangeRequestApprovalParams>;
    const changes = patches.get(String(p.itemId ?? '')) ?? [];
    return {
      requestId,
      tool: 'ApplyPatch',
      input: {
        // A move writes its destination too: the card shows it and the rule checks it.
        changes: changes.map((c) => ({
          path: c.path,
          kind: c.kind.type,
          ...(c.kind.type === 'update' && typeof c.kind.move_path === 'string' ? { movePath: c.kind.move_path } : {}),
          diff: c.diff,
        })),
        ...(typeof p.grantRoot === 'string' ? { grantRoot: p.grantRoot } : {}),
        ...(typeof p.reason === 'string' ? { reason: p.reason } : {}),
      },
    };
  }
  const p = params as Partial<PermissionsRequestApprovalParams>;
  return {
    requestId,
    tool: 'Permissions',
    input: { permissions: p.permissions ?? null, cwd: p.cwd ?? null, reason: p.reason ?? null },
  };
}

/** codex's answer to an approval request, for baton's verdict. */
export function approvalAnswer(request: SessionRequest, allow: boolean): unknown {
  if (request.method === 'item/permissions/requestApproval') {
    const asked = (request.params as Partial<PermissionsRequestApprovalParams> | undefined)?.permissions;
    const permissions: GrantedPermissionProfile = {};
    if (allow && asked?.network) permissions.network = asked.network;
    if (allow && asked?.fileSystem) permissions.fileSystem = asked.fileSystem;
    // For this turn only: a later request asks again.
    return { permissions, scope: 'turn' } satisfies PermissionsRequestApprovalResponse;
  }
  const decision = allow ? 'accept' : 'decline';
  return request.method === 'item/fileChange/requestApproval'
    ? ({ decision } satisfies FileChangeRequestApprovalResponse)
    : ({ decision } satisfies CommandExecutionRequestApprovalResponse);
}
