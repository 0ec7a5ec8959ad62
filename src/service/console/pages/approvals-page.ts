/** `/approvals`: the tool approvals waiting for an answer, answerable as from the chat card. */
import type { ApprovalRow } from '../../../store/schema/approvals.js';
import { APPROVALS_PAGE } from '../../../wording/console.js';
import { html, type Html } from '../html.js';
import { formatTime, layout } from './layout.js';

/** One open approval with what the page shows of its run. */
export interface OpenApproval {
  approval: ApprovalRow;
  task: string;
  vendor: string;
}

/** The whole approvals page; `flash` is the answer of the last press, shown once. */
export function approvalsPage(csrf: string, open: readonly OpenApproval[], flash?: string): Html {
  const body = html`${flash ? html`<p role="status">${APPROVALS_PAGE.answered(flash)}</p>` : ''}
${open.length === 0 ? html`<p>${APPROVALS_PAGE.none}</p>` : html`<ul>${open.map((o) => card(csrf, o))}</ul>`}`;
  return layout({ title: APPROVALS_PAGE.title, csrf, live: '' }, body);
}

function card(csrf: string, { approval, task, vendor }: OpenApproval): Html {
  const button = (decision: string, label: string): Html =>
    html`<button type="submit" name="decision" value="${decision}">${label}</button>`;
  return html`<li data-approval="${approval.id}">
<p><strong>${APPROVALS_PAGE.asks(vendor, approval.tool)}</strong> · <a href="/runs/${approval.runId}">${approval.runId}</a> · ${formatTime(approval.requestedAt)}</p>
<pre>${JSON.stringify(approval.input, null, 2)}</pre>
<p class="muted task">${task.length > 200 ? `${task.slice(0, 199)}…` : task}</p>
<form method="post" action="/approvals/${approval.id}"><input type="hidden" name="csrf" value="${csrf}">
${button('allow', APPROVALS_PAGE.allow)} ${button('allow_run', APPROVALS_PAGE.allowRun)} ${button('deny', APPROVALS_PAGE.deny)}
</form></li>`;
}
