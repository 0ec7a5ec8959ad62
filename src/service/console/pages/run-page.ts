/** `/runs/RUN_ID`: one run's header, transcript, approvals, diff and deliveries. */
import type { TranscriptStep } from '../../../harness/vendors/transcript.js';
import type { ApprovalRow } from '../../../store/schema/approvals.js';
import type { DeliveryRow } from '../../../store/schema/deliveries.js';
import type { RunRow } from '../../../store/schema/runs.js';
import { RUN_PAGE } from '../../../wording/console.js';
import { html, type Html } from '../html.js';
import { formatDurationMs, formatTime, layout } from './layout.js';
import { runDurationMs } from './runs-page.js';
import { diffView, transcriptList } from './transcript-view.js';

/** What the run page shows. */
export interface RunView {
  csrf: string;
  /** The answer to the last form sent (a redeliver), shown once. */
  flash?: string;
  run: RunRow;
  nowMs: number;
  /** The page of the transcript; undefined when this node holds no events of the run. */
  transcript?: { steps: TranscriptStep[]; from: number; to: number; total: number; perPage: number };
  approvals: ApprovalRow[];
  /** The patch text (cut to the shown maximum), or undefined when the run has none here. */
  patch?: string;
  hasResult: boolean;
  deliveries: DeliveryRow[];
}

/** The whole run page. */
export function runPage(view: RunView): Html {
  const { run } = view;
  const body = html`${view.flash ? html`<p role="status">${view.flash}</p>` : ''}
${header(view)}
<section aria-labelledby="transcript-h"><h2 id="transcript-h">${RUN_PAGE.transcript}</h2>${transcriptSection(view)}</section>
${approvalsSection(view.approvals)}
<section aria-labelledby="diff-h"><h2 id="diff-h">${RUN_PAGE.diff}</h2>${diffSection(view)}</section>
<section aria-labelledby="deliveries-h"><h2 id="deliveries-h">${RUN_PAGE.deliveries}</h2>${deliveriesTable(view)}</section>`;
  return layout({ title: `${RUN_PAGE.summary} ${run.id}`, csrf: view.csrf, live: run.id }, body);
}

function capsOf(run: RunRow): string {
  const o = run.options;
  const caps = [
    `timeout ${o.timeoutMinutes} min`,
    o.budgetUsd !== undefined ? `budget $${o.budgetUsd}` : '',
    o.maxTurns !== undefined ? `turns ${o.maxTurns}` : '',
    o.maxTokens !== undefined ? `tokens ${o.maxTokens}` : '',
  ];
  return caps.filter(Boolean).join(', ');
}

function fact(label: string, value: string | Html): Html {
  return html`<dt>${label}</dt><dd>${value}</dd>`;
}

function header(view: RunView): Html {
  const { run } = view;
  const f = RUN_PAGE.fields;
  const duration = runDurationMs(run, view.nowMs);
  const usage = run.usage;
  return html`<dl class="facts">
${fact(f.status, html`<span class="status-${run.status}" data-status="${run.status}">${run.status}</span>`)}
${fact(f.reason, run.reason ?? RUN_PAGE.none)}
${fact(f.vendor, run.vendor)}
${fact(f.node, run.node ?? RUN_PAGE.none)}
${fact(f.directory, run.cwd)}
${fact(f.worktree, run.branch ? run.worktreeRoot : RUN_PAGE.none)}
${fact(f.branch, run.branch ?? RUN_PAGE.none)}
${fact(f.duration, duration === undefined ? RUN_PAGE.none : formatDurationMs(duration))}
${fact(f.tokens, usage ? `${usage.inputTokens} in, ${usage.outputTokens} out` : RUN_PAGE.none)}
${fact(f.cost, usage?.costUsd !== undefined ? `$${usage.costUsd.toFixed(4)}` : RUN_PAGE.none)}
${fact(f.caps, capsOf(run))}
${fact(f.task, html`<span class="task">${run.task}</span>`)}
</dl>`;
}

function transcriptSection(view: RunView): Html {
  const t = view.transcript;
  if (!t) {
    return html`<p>${view.run.node && view.run.status !== 'queued' ? RUN_PAGE.elsewhere(view.run.node) : RUN_PAGE.noTranscript}</p>`;
  }
  const earlier = t.from > 0 ? html`<a href="?events=${Math.max(0, t.from - t.perPage)}">${RUN_PAGE.earlier}</a>` : '';
  const later = t.to < t.total ? html`<a href="?events=${t.to}">${RUN_PAGE.later}</a>` : '';
  const nav =
    t.total > t.perPage ? html`<p>${RUN_PAGE.eventsShown(t.from + 1, t.to)} / ${t.total} ${earlier} ${later}</p>` : '';
  return html`${nav}${transcriptList(t.steps, t.from)}${nav}`;
}

function approvalsSection(rows: readonly ApprovalRow[]): Html | '' {
  if (rows.length === 0) return '';
  return html`<section aria-labelledby="approvals-h"><h2 id="approvals-h">${RUN_PAGE.approvalsTitle}</h2><ul>
${rows.map((a) =>
  a.decision
    ? html`<li data-approval="${a.id}">${RUN_PAGE.approvalLine(a.tool, a.decision, a.decidedBy ?? '?', formatTime(a.decidedAt))}</li>`
    : html`<li data-approval="${a.id}">${RUN_PAGE.approvalOpen(a.tool)} <a href="/approvals">${RUN_PAGE.answer}</a></li>`,
)}
</ul></section>`;
}

function diffSection(view: RunView): Html {
  const id = view.run.id;
  const links = [
    view.patch !== undefined
      ? html`<a href="/runs/${id}/patch" download="${id}.patch">${RUN_PAGE.downloadPatch}</a>`
      : '',
    view.hasResult ? html`<a href="/runs/${id}/result.md" download="result.md">${RUN_PAGE.downloadResult}</a>` : '',
  ];
  return html`<p>${links[0]} ${links[1]}</p>${view.patch === undefined ? html`<p>${RUN_PAGE.noDiff}</p>` : diffView(view.patch)}`;
}

function deliveriesTable(view: RunView): Html {
  if (view.deliveries.length === 0) return html`<p>${RUN_PAGE.noDeliveries}</p>`;
  return html`<div class="table-wrap"><table>
<thead><tr>${RUN_PAGE.deliveryColumns.map((c) => html`<th scope="col">${c}</th>`)}</tr></thead>
<tbody>${view.deliveries.map(
    (d) => html`<tr data-delivery="${d.id}"><td>${d.id}</td><td>${d.kind}</td><td>${d.status}</td><td>${d.attempts}</td>
<td>${d.lastError ?? ''}</td>
<td>${
      d.status === 'dead'
        ? html`<form method="post" action="/runs/${view.run.id}/deliveries/${d.id}/redeliver"><input type="hidden" name="csrf" value="${view.csrf}"><button type="submit">${RUN_PAGE.redeliver} #${d.id}</button></form>`
        : ''
    }</td></tr>`,
  )}</tbody></table></div>`;
}
