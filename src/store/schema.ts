/**
 * The drizzle schema: one definition for PostgreSQL (postgres.js) and embedded PGlite, one file
 * per table under `schema/`. SQL migrations under `migrations/` are generated from this module by
 * `npm run db:generate`.
 */
export * from './schema/runs.js';
export * from './schema/deliveries.js';
export * from './schema/inbound-events.js';
export * from './schema/run-messages.js';
export * from './schema/conversation-defaults.js';
export * from './schema/conversation-sessions.js';
export * from './schema/nodes.js';
export * from './schema/leases.js';
export * from './schema/approvals.js';
export * from './schema/button-presses.js';
export * from './schema/schedules.js';
export * from './schema/plan-windows.js';
export type { DenialJson, UsageJson, VerificationJson, VerifyPlanJson } from '../types/run-facts.js';
export type { ButtonJson } from '../core/buttons.js';
