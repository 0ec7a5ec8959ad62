/** What claude's permission-prompt tool is answered for a decided approval. */
import type { ApprovalRow } from '../store/schema.js';
import type { ApprovalAnswer } from './approval-types.js';
import type { ApprovalWords } from './ports.js';

/** What claude is told for each decision (`row.decision` must be set); `timeoutMs` is the approval wait. */
export function answerOf(row: ApprovalRow, timeoutMs: number, words: ApprovalWords): ApprovalAnswer {
  const decision = row.decision!;
  switch (decision) {
    case 'allow':
    case 'allow_run':
      return { state: 'decided', decision, behavior: 'allow', message: '' };
    case 'deny':
      return { state: 'decided', decision, behavior: 'deny', message: words.deniedByOwner };
    case 'timeout':
      return { state: 'decided', decision, behavior: 'deny', message: words.deniedByTimeout(timeoutMs) };
    case 'run_gone':
      return { state: 'decided', decision, behavior: 'deny', message: words.deniedRunGone };
  }
}
