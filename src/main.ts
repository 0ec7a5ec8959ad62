/**
 * The composition root: environment → config → wiring → start. The only module that reads
 * `process.env`; the command entry (src/cli/baton.ts) reaches the wiring through it.
 */
import { readServiceInputs, readServicePaths, type ServiceInputs, type ServicePaths } from './config/service-inputs.js';
import { systemClock } from './core/clock.js';
import type { Logger } from './core/logger.js';
import { useGitHost } from './harness/git-host.js';
import type { AskCore } from './terminal/ask-core.js';
import { buildRuntime } from './wiring/runtime.js';

// git finds itself and its global config through this process's PATH and HOME, followed live.
useGitHost(process.env);

export { startService, type Service, type StartOptions } from './wiring/start-service.js';
export { VENDORS } from './wiring/vendors.js';
export type { ServiceInputs, ServicePaths };

/**
 * Reads `.env` files (the real environment wins), validates the environment, writes a starter
 * config on first start and loads it (see {@link readServiceInputs}).
 *
 * @throws BatonError `env_invalid`, `config_invalid`, `config_unreadable`.
 */
export function loadInputs(
  processEnv: Readonly<Record<string, string | undefined>> = process.env,
): Promise<ServiceInputs> {
  return readServiceInputs(processEnv);
}

/**
 * Where things are, without loading the config (see {@link readServicePaths}).
 *
 * @throws BatonError `env_invalid`, `config_unreadable`.
 */
export function loadPaths(
  processEnv: Readonly<Record<string, string | undefined>> = process.env,
): Promise<ServicePaths> {
  return readServicePaths(processEnv);
}

/**
 * Builds the core one `baton ask` runs its task on. It reads config.toml anew per command, and
 * starts only the queued run it waits for: a queued run of someone else's would be left half
 * started when the ask's process exits.
 *
 * @throws BatonError `database_unavailable`, `migration_failed`.
 */
export function openAskCore(inputs: ServiceInputs, logger: Logger): Promise<AskCore> {
  return buildRuntime({ ...inputs, clock: systemClock, logger, configPerCommand: true, queueScope: 'own' });
}
