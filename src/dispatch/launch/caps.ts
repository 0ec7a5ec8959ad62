/** The spending caps of a run. */
import type { BatonConfig } from '../../config/index.js';
import { BatonError } from '../../core/errors.js';
import type { VendorName } from '../../core/vendor-name.js';
import { VENDOR_FACTS } from '../../harness/vendors/types.js';
import type { RunOptionsJson, RunRow } from '../../store/schema.js';
import { CODEX_BUDGET_REFUSAL, CODEX_TURNS_REFUSAL } from '../../wording/commands.js';
import type { LaunchOptions } from '../command.js';

/** The caps a run row keeps in its options. */
export type RunCaps = Pick<RunOptionsJson, 'budgetUsd' | 'maxTurns' | 'maxTokens'>;

/**
 * The spending caps of a run: the launch's own options, else the parent's on a
 * resume, else the `[harness]` defaults. Dollar and turn caps exist only for claude (its
 * `--max-budget-usd` / `--max-turns`); their defaults do not apply to codex, and asking for them
 * on a codex run (`/run` with codex the default vendor) is refused. The token cap applies to both.
 *
 * @throws BatonError `usage` for `budget:` or `turns:` on a codex run.
 */
export function runCaps(
  vendor: VendorName,
  options: LaunchOptions,
  harness: BatonConfig['harness'],
  parent: RunRow | undefined,
): RunCaps {
  const facts = VENDOR_FACTS[vendor];
  if (!facts.budgetCap && options.budgetUsd !== undefined) throw new BatonError('usage', CODEX_BUDGET_REFUSAL);
  if (!facts.turnCap && options.maxTurns !== undefined) throw new BatonError('usage', CODEX_TURNS_REFUSAL);
  const budgetUsd = facts.budgetCap
    ? (options.budgetUsd ?? parent?.options.budgetUsd ?? harness.defaultBudgetUsd)
    : undefined;
  const maxTurns = facts.turnCap
    ? (options.maxTurns ?? parent?.options.maxTurns ?? harness.defaultMaxTurns)
    : undefined;
  const maxTokens = options.maxTokens ?? parent?.options.maxTokens ?? harness.defaultMaxTokens;
  return {
    ...(budgetUsd !== undefined ? { budgetUsd } : {}),
    ...(maxTurns !== undefined ? { maxTurns } : {}),
    ...(maxTokens !== undefined ? { maxTokens } : {}),
  };
}
