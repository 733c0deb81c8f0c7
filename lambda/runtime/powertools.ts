/**
 * The Powertools logger and metrics of every Lambda of the stack, set up one way. The stack sets
 * `POWERTOOLS_SERVICE_NAME` per function (`catalog-sync-<cursor>`, `…-backfill`, `catalog-sync-consumer-<name>`) so
 * that two syncs' metrics and alarms do not collide; an explicit `serviceName` would override the variable, so it is
 * read here, with each function's own fallback. The namespace is `POWERTOOLS_METRICS_NAMESPACE`, or the contract's.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { DEFAULT_METRICS_NAMESPACE } from '../contract/index.js';

/** The function's service name: `POWERTOOLS_SERVICE_NAME`, or `fallback` when it is unset or blank. */
export function serviceNameOf(env: NodeJS.ProcessEnv, fallback: string): string {
  return env.POWERTOOLS_SERVICE_NAME?.trim() || fallback;
}

/** The function's logger (Powertools: JSON lines, `POWERTOOLS_LOG_LEVEL`). */
export function lambdaLogger(env: NodeJS.ProcessEnv, fallbackService: string): Logger {
  return new Logger({ serviceName: serviceNameOf(env, fallbackService) });
}

/** The function's metrics (EMF), under its service name and the stack's namespace. */
export function lambdaMetrics(env: NodeJS.ProcessEnv, fallbackService: string): Metrics {
  return new Metrics({
    namespace: env.POWERTOOLS_METRICS_NAMESPACE?.trim() || DEFAULT_METRICS_NAMESPACE,
    serviceName: serviceNameOf(env, fallbackService),
  });
}

/** One level of an engine's log: a message and its fields. */
type Log = (message: string, extra?: Record<string, unknown>) => void;

/**
 * What an engine logs, through `logger` (the engines' EngineLogger). `debug` carries each S3 PUT retry:
 * `POWERTOOLS_LOG_LEVEL=DEBUG` shows them; the run summary counts them always.
 */
export function engineLogger(logger: Logger): { info: Log; warn: Log; error: Log; debug: Log } {
  return {
    info: (message, extra) => logger.info(message, extra ?? {}),
    warn: (message, extra) => logger.warn(message, extra ?? {}),
    error: (message, extra) => logger.error(message, extra ?? {}),
    debug: (message, extra) => logger.debug(message, extra ?? {}),
  };
}
