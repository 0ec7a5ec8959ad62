/** The chat message that asks the owner about one tool call. */
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunId } from '../core/ids.js';
import type { DocumentJson, RunRow } from '../store/schema.js';
import { approvalButtons } from './approval-buttons.js';
import { alwaysAsks, describeKind, type ApprovalScope } from './approval-scope.js';
import { cutToolCallText, MAX_APPROVAL_INPUT_CHARS, revealToolCall } from './approval-text.js';
import type { ApprovalBrokerDeps, ApprovalRequest } from './approval-types.js';
import { hiddenWarning, revealHidden } from './reveal-text.js';
import { outcomeTarget } from './run/outcome-target.js';

/**
 * Posts the approval message: the tool and its input, the buttons. An input that would make the
 * message longer than the platform's limit is cut to fit one message, and the whole input is
 * written to the run directory and sent as a file after the message (the buttons stay under
 * the message). A file that cannot be written is logged; the cut message still goes.
 */
export async function postApprovalMessage(
  deps: ApprovalBrokerDeps,
  run: RunRow,
  approvalId: number,
  request: ApprovalRequest,
  scope: ApprovalScope,
): Promise<void> {
  const { words } = deps;
  const { kind } = scope;
  const revealed = revealToolCall(request.tool, request.input);
  const header = words.askHeader(run.id, revealHidden(request.tool, true).text, run.vendor);
  // The warnings go before the footer, so a cut input never cuts them.
  const warnings = [
    ...(scope.mark ? [words.alwaysAsksWarning(scope.mark, revealHidden(scope.path ?? '', true).text)] : []),
    ...(hiddenWarning(revealed.found) ? [hiddenWarning(revealed.found)!] : []),
  ];
  const covers = alwaysAsks(kind) ? undefined : describeKind(kind);
  const footer = words.askFooter({ warnings, waitMs: deps.timeoutMs, covers });
  const platformMax = deps.maxMessageLength?.(run.origin.platform);
  const maxChars = Math.min(
    MAX_APPROVAL_INPUT_CHARS,
    platformMax === undefined ? Infinity : Math.max(200, platformMax - header.length - footer.length),
  );
  const whole = revealed.text;
  const filename = `approval-${approvalId}.txt`;
  const documents: DocumentJson[] = [];
  if (whole.length > maxChars && deps.runsDir) {
    const path = join(deps.runsDir, run.id, filename);
    await writeFile(path, whole, { mode: 0o600 })
      .then(() => chmod(path, 0o600))
      .then(
        () =>
          documents.push({
            path,
            filename,
            use: 'always',
            caption: words.wholeInputCaption(run.id, filename),
          }),
        (err: unknown) =>
          deps.logger.warn(
            { err, runId: run.id, approvalId },
            'could not write the whole tool input; the approval message is cut',
          ),
      );
  }
  await deps.outbox.send({
    runId: run.id as RunId,
    kind: 'approval',
    target: outcomeTarget(run),
    body: `${header}${cutToolCallText(whole, maxChars, (more) => words.inputCutNote(more, documents.length > 0 ? filename : undefined))}${footer}`,
    buttons: approvalButtons(words.buttons, approvalId, kind),
    ...(documents.length > 0 ? { documents } : {}),
  });
}
