/**
 * The words of the local web console (`baton console`): page titles, labels, refusals and the
 * CLI's login line. Built from plain facts, like every other wording module.
 */

/** Page titles and navigation. */
export const CONSOLE_NAV = {
  product: 'baton console',
  runs: 'Runs',
  approvals: 'Approvals',
  logout: 'Sign out',
  skip: 'Skip to content',
} as const;

/** The refusals a browser may see, each saying what to do. */
export const CONSOLE_REFUSALS = {
  signIn:
    'Not signed in, or the session expired. Run `baton console` on the machine baton runs on and open the link it prints.',
  loginUsed: 'This login link is unknown, used already or expired. Run `baton console` again for a new one.',
  csrf: 'Refused: the form was not sent by this console page (missing or wrong CSRF token). Reload the page and try again.',
  crossOrigin: 'Refused: a state-changing request must come from a page of this console.',
  host: 'Refused: this console answers only under the address `baton console` printed.',
  notFound: 'Not found.',
  noRun: (runId: string): string => `No run ${runId} in the database.`,
  noPatch: (runId: string): string => `Run ${runId} has no patch on this node.`,
  noResult: (runId: string): string => `Run ${runId} has no result.md on this node.`,
} as const;

/** The login page after a token was spent. */
export const CONSOLE_SIGNED_IN = {
  title: 'Signed in',
  body: 'Signed in. Opening the runs…',
  link: 'Open the runs',
} as const;

/** The runs page. */
export const RUNS_PAGE = {
  title: 'Runs',
  filters: 'Filter runs',
  status: 'Status',
  vendor: 'Vendor',
  node: 'Node',
  conversation: 'Conversation',
  any: 'any',
  apply: 'Filter',
  counts: 'Counts',
  pendingDeliveries: 'pending deliveries',
  deadLetters: 'dead letters',
  none: 'No runs match.',
  columns: ['Run', 'Status', 'Vendor', 'Node', 'Task', 'Started', 'Duration'] as const,
  shown: (from: number, to: number, total: number): string => `${from}–${to} of ${total}`,
  newer: 'Newer',
  older: 'Older',
} as const;

/** The run page. */
export const RUN_PAGE = {
  summary: 'Run',
  fields: {
    status: 'Status',
    reason: 'Reason',
    vendor: 'Vendor',
    node: 'Node',
    directory: 'Directory',
    worktree: 'Worktree',
    branch: 'Branch',
    duration: 'Duration',
    tokens: 'Tokens',
    cost: 'Cost',
    caps: 'Caps',
    task: 'Task',
  },
  transcript: 'Transcript',
  noTranscript: 'No stored events for this run on this node.',
  elsewhere: (node: string): string => `The events of this run are stored on node ${node}; open its console there.`,
  eventsShown: (from: number, to: number): string => `events ${from}–${to}`,
  earlier: 'Earlier events',
  later: 'Later events',
  output: 'Output',
  exit: (code: number): string => `exit ${code}`,
  running: 'running',
  failed: 'failed',
  reasoning: 'Reasoning',
  filesChanged: 'Files changed',
  approvalsTitle: 'Approvals',
  approvalLine: (tool: string, decision: string, by: string, at: string): string =>
    `${tool}: ${decision} by ${by} at ${at}`,
  approvalOpen: (tool: string): string => `${tool}: waiting for an answer`,
  diff: 'Diff',
  noDiff: 'No patch on this node.',
  downloadPatch: 'Download .patch',
  downloadResult: 'Download result.md',
  deliveries: 'Deliveries',
  noDeliveries: 'No deliveries.',
  deliveryColumns: ['#', 'Kind', 'Status', 'Attempts', 'Last error', ''] as const,
  redeliver: 'Redeliver',
  answer: 'Answer',
  none: '—',
} as const;

/** The approvals page. */
export const APPROVALS_PAGE = {
  title: 'Open approvals',
  none: 'No tool approval is waiting.',
  asks: (vendor: string, tool: string): string => `${vendor} asks to use ${tool}`,
  allow: 'Allow',
  allowRun: 'Allow for this run',
  deny: 'Deny',
  answered: (answer: string): string => `Answered: ${answer}`,
} as const;

/** What `baton console` prints. */
export const consoleLoginLine = (url: string, ttlMinutes: number): string =>
  `Open this link in a browser on this machine (it works once, for ${ttlMinutes} minutes):\n${url}`;

/** What `baton console --open` prints when the desktop's opener could not start. */
export const consoleOpenFailed = (opener: string, why: string): string =>
  `Could not start ${opener} (${why}); open the link above yourself.`;

/** The second line of `baton console` when `[console] listen` is set. */
export const consoleAlsoLine = (url: string): string => `or, under [console] listen (the same link, once):\n${url}`;
