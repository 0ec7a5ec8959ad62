/** The transcript and the diff of a run page, as markup. */
import type { TranscriptStep } from '../../../harness/vendors/transcript.js';
import { RUN_PAGE } from '../../../wording/console.js';
import { html, type Html } from '../html.js';

/** Steps as a list; commands and tools carry their output in a collapsed `<details>`. */
export function transcriptList(steps: readonly TranscriptStep[], firstIndex: number): Html {
  return html`<ol class="transcript">${steps.map((step, i) => stepItem(step, `step-${firstIndex + i}`))}</ol>`;
}

function outputOf(id: string, output: string | undefined): Html | '' {
  if (!output) return '';
  return html`<details id="${id}"><summary>${RUN_PAGE.output}</summary><pre>${output}</pre></details>`;
}

function stepItem(step: TranscriptStep, id: string): Html {
  switch (step.kind) {
    case 'message':
      return html`<li class="message">${step.text}</li>`;
    case 'reasoning':
      return html`<li class="reasoning"><span class="muted">${RUN_PAGE.reasoning}:</span> ${step.text}</li>`;
    case 'command': {
      const state =
        step.exitCode !== undefined
          ? RUN_PAGE.exit(step.exitCode)
          : !step.done
            ? RUN_PAGE.running
            : step.failed
              ? RUN_PAGE.failed
              : '';
      return html`<li class="command${step.failed ? ' failed' : ''}"><code>$ ${step.command}</code> <span class="muted">${state}</span>${outputOf(id, step.output)}</li>`;
    }
    case 'tool':
      return html`<li class="tool${step.failed ? ' failed' : ''}"><strong>${step.name}</strong> <code>${step.input}</code>${step.failed ? html` <span class="muted">${RUN_PAGE.failed}</span>` : ''}${outputOf(id, step.output)}</li>`;
    case 'files':
      return html`<li class="files">${RUN_PAGE.filesChanged}: ${step.changes.map((c, i) => html`${i > 0 ? ', ' : ''}<code>${c.path}</code> <span class="muted">(${c.change})</span>`)}</li>`;
    case 'notice':
      return html`<li class="notice muted">${step.text}</li>`;
    case 'result':
      return html`<li class="result${step.failed ? ' failed' : ''}">${step.text}</li>`;
  }
}

/** A unified diff with its file headers, hunk headers, additions and deletions marked. */
export function diffView(patch: string): Html {
  const lines = patch.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return html`<pre class="diff" tabindex="0" aria-label="${RUN_PAGE.diff}">${lines.map((line) => html`<span class="${lineClass(line)}">${line}</span>`)}</pre>`;
}

function lineClass(line: string): string {
  if (line.startsWith('diff --git')) return 'file';
  if (line.startsWith('@@')) return 'hunk';
  if (line.startsWith('+++') || line.startsWith('---')) return 'ctx';
  if (line.startsWith('+')) return 'add';
  if (line.startsWith('-')) return 'del';
  return 'ctx';
}
