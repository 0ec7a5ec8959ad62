/** `/runs`: every run of the fleet, newest first, with filters, counts and paging. */
import { VENDOR_NAMES } from '../../../core/vendor-name.js';
import type { FleetCounts, RunFilter, RunPage } from '../../../store/console-reads.js';
import type { RunRow } from '../../../store/schema/runs.js';
import { RUN_STATUSES } from '../../../types/run-facts.js';
import { RUNS_PAGE } from '../../../wording/console.js';
import { html, type Html } from '../html.js';
import { formatDurationMs, formatTime, layout } from './layout.js';

/** Runs per page of the list. */
export const RUNS_PER_PAGE = 50;

/** What the runs page shows. */
export interface RunsView {
  csrf: string;
  filter: RunFilter;
  page: RunPage;
  /** 0-based page number. */
  pageNumber: number;
  counts: FleetCounts;
  choices: { nodes: string[]; conversations: string[] };
  nowMs: number;
}

/** The whole runs page. */
export function runsPage(view: RunsView): Html {
  const body = html`${countsOf(view.counts)}
${filterForm(view)}
${view.page.rows.length === 0 ? html`<p>${RUNS_PAGE.none}</p>` : runsTable(view.page.rows, view.nowMs)}
${pager(view)}`;
  return layout({ title: RUNS_PAGE.title, csrf: view.csrf, live: '' }, body);
}

function countsOf(counts: FleetCounts): Html {
  const statuses = RUN_STATUSES.filter((s) => (counts.byStatus[s] ?? 0) > 0);
  return html`<section aria-label="${RUNS_PAGE.counts}"><ul class="counts">
${statuses.map((s) => html`<li><span class="status-${s}">${s}</span> <strong>${counts.byStatus[s] ?? 0}</strong></li>`)}
<li>${RUNS_PAGE.pendingDeliveries} <strong data-count="pending">${counts.pendingDeliveries}</strong></li>
<li>${RUNS_PAGE.deadLetters} <strong data-count="dead">${counts.deadLetters}</strong></li>
</ul></section>`;
}

function select(name: string, label: string, values: readonly string[], chosen: string | undefined): Html {
  return html`<label>${label}<select name="${name}">
<option value="">${RUNS_PAGE.any}</option>
${values.map((v) => html`<option value="${v}"${v === chosen ? html` selected` : ''}>${v}</option>`)}
</select></label>`;
}

function filterForm(view: RunsView): Html {
  const f = view.filter;
  return html`<form class="filters" method="get" action="/runs" aria-label="${RUNS_PAGE.filters}">
${select('status', RUNS_PAGE.status, RUN_STATUSES, f.status)}
${select('vendor', RUNS_PAGE.vendor, VENDOR_NAMES, f.vendor)}
${select('node', RUNS_PAGE.node, view.choices.nodes, f.node)}
${select('conversation', RUNS_PAGE.conversation, view.choices.conversations, f.conversation)}
<button type="submit">${RUNS_PAGE.apply}</button>
</form>`;
}

/** How long a run took (or has taken so far), in ms; undefined before it started. */
export function runDurationMs(run: RunRow, nowMs: number): number | undefined {
  if (!run.startedAt) return undefined;
  return (run.endedAt?.getTime() ?? nowMs) - run.startedAt.getTime();
}

function runsTable(rows: readonly RunRow[], nowMs: number): Html {
  return html`<div class="table-wrap"><table>
<thead><tr>${RUNS_PAGE.columns.map((c) => html`<th scope="col">${c}</th>`)}</tr></thead>
<tbody>
${rows.map((run) => {
  const duration = runDurationMs(run, nowMs);
  return html`<tr data-run="${run.id}">
<td><a href="/runs/${run.id}">${run.id}</a></td>
<td class="status-${run.status}">${run.status}${run.reason ? html` <span class="muted">(${run.reason})</span>` : ''}</td>
<td>${run.vendor}</td><td>${run.node ?? '—'}</td>
<td class="task">${run.task.length > 140 ? `${run.task.slice(0, 139)}…` : run.task}</td>
<td>${formatTime(run.startedAt ?? run.createdAt)}</td>
<td>${duration === undefined ? '—' : formatDurationMs(duration)}</td>
</tr>`;
})}
</tbody></table></div>`;
}

/** The query string of `filter` with `page`. */
function queryOf(filter: RunFilter, page: number): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(filter)) if (value) params.set(key, value as string);
  if (page > 0) params.set('page', String(page));
  const text = params.toString();
  return text ? `?${text}` : '';
}

function pager(view: RunsView): Html {
  const { total } = view.page;
  if (total === 0) return html``;
  const from = view.pageNumber * RUNS_PER_PAGE + 1;
  const to = Math.min(total, from + view.page.rows.length - 1);
  const newer =
    view.pageNumber > 0 ? html`<a href="/runs${queryOf(view.filter, view.pageNumber - 1)}">${RUNS_PAGE.newer}</a>` : '';
  const older =
    to < total ? html`<a href="/runs${queryOf(view.filter, view.pageNumber + 1)}">${RUNS_PAGE.older}</a>` : '';
  return html`<nav aria-label="Pages"><p>${RUNS_PAGE.shown(from, to, total)} ${newer} ${older}</p></nav>`;
}
