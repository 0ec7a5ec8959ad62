/**
 * The import rules of src/: which folder may use which. `npm run lint` runs them through
 * scripts/check-layering.mjs, which also fails when an entry of the known-violations file no
 * longer occurs, so that file may only shrink.
 *
 * Paths are matched against `src/...` as dependency-cruiser resolves them (type-only imports
 * count: a type is a dependency too).
 */

/** Every SDK a channel adapter wraps, and the one folder allowed to import it. */
const SDKS = [
  { name: 'telegram', modules: '^node_modules/(grammy|@grammyjs)/' },
  { name: 'slack', modules: '^node_modules/@slack/' },
  { name: 'discord', modules: '^node_modules/(discord\\.js|@discordjs)/' },
];

/** The wording module: every sentence a user reads. */
const WORDING = '^src/wording(\\.ts$|/)';
/** The wiring: builds the deps object from config; only `main` may use it. */
const WIRING = '^src/(wiring|wire|runtime)(\\.ts$|/)';
/** Vendor modules: the only code that knows a CLI's flags and events. Their shared types are the port. */
const VENDOR_MODULES = '^src/harness/vendors/(?!types\\.ts$)';
const ALL_SDKS = SDKS.map((sdk) => sdk.modules.replace('^node_modules/', '')).join('|');

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'A cycle means neither module can be understood, tested or moved without the other.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'core-imports-nothing',
      severity: 'error',
      comment: 'core holds errors, ids, clock and logger: everything may use it, so it may use nothing of baton.',
      from: { path: '^src/core/' },
      to: { path: '^src/', pathNot: '^src/(core|types)/' },
    },
    {
      name: 'store-only-core',
      severity: 'error',
      comment: 'The repositories keep rows; they know no chat, vendor or config.',
      from: { path: '^src/store/' },
      to: { path: '^src/', pathNot: '^src/(core|store|types)/' },
    },
    {
      name: 'wording-only-core-and-facts',
      severity: 'error',
      comment: 'Sentences are built from plain facts; the wording never reaches into the parts that produce them.',
      from: { path: WORDING },
      to: { path: '^src/', pathNot: [WORDING, '^src/(core|types)/'] },
    },
    {
      name: 'channels-not-inner-layers',
      severity: 'error',
      comment: 'Adapters normalize and send; config, storage, decisions and runs are none of their business.',
      from: { path: '^src/channels/' },
      to: { path: '^src/(config|store|dispatch|harness)/' },
    },
    ...SDKS.map((sdk) => ({
      name: `${sdk.name}-sdk-only-in-its-folder`,
      severity: 'error',
      comment: `The ${sdk.name} SDK is imported from src/channels/${sdk.name}/ only.`,
      from: { path: '^src/', pathNot: `^src/channels/${sdk.name}/` },
      to: { path: sdk.modules },
    })),
    {
      name: 'dispatch-no-sdk-or-vendor',
      severity: 'error',
      comment:
        'The dispatcher decides on normalized messages and on what a vendor module reports, never on their types.',
      from: { path: '^src/dispatch/' },
      to: { path: [`^node_modules/(${ALL_SDKS})`, VENDOR_MODULES] },
    },
    {
      name: 'harness-reports-facts',
      severity: 'error',
      comment: 'The harness runs CLIs and reports facts; words and decisions come in through injected ports.',
      from: { path: '^src/harness/' },
      to: { path: ['^src/(dispatch|channels|doctor)/', WORDING] },
    },
    {
      name: 'workers-not-dispatch',
      severity: 'error',
      comment: 'Delivery, the fleet and queues run beside the dispatcher, not through it.',
      from: { path: ['^src/(delivery|fleet)/', '^src/.*queue'] },
      to: { path: '^src/dispatch/' },
    },
    {
      name: 'nothing-imports-main',
      severity: 'error',
      comment: 'main is the composition root; only the command entry starts it.',
      from: { path: '^src/', pathNot: '^src/cli/baton\\.ts$' },
      to: { path: '^src/main\\.ts$' },
    },
    {
      name: 'nothing-imports-wiring',
      severity: 'error',
      comment: 'The wiring is used by main only; everything else receives what it builds.',
      from: { path: '^src/', pathNot: ['^src/main\\.ts$', WIRING] },
      to: { path: WIRING },
    },
    {
      name: 'nothing-imports-cli',
      severity: 'error',
      comment: 'The command line is an outer shell; the service never depends on it.',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|test)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.d.ts'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
