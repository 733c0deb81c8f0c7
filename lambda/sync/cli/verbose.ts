/**
 * `--verbose`: every request (method, redacted URL, status, ms), every retry (why, delay) and every checkpoint,
 * as JSON lines on stderr in the Powertools Logger format the Lambda writes (`level`, `message`, `timestamp`,
 * `service`, then the fields). The engine knows no shell: this face hooks into the HTTP client's listeners, wraps
 * the cursor store, and hands the engine a logger.
 */
import { Console } from 'node:console';
import { Logger } from '@aws-lambda-powertools/logger';
import type { Command } from 'commander';
import type { HttpClient } from '../../catalog/index.js';
import { formatTimestamp } from '../../contract/index.js';
import type { BackfillStore, CursorStore } from '../../stores/types.js';
import type { EngineLogger } from '../index.js';

/** The service name of the log lines, as the Lambda's default. */
const SERVICE = 'catalog-sync';

/** Registers `--verbose` on `command`. */
export function verboseOption(command: Command): Command {
  return command.option('--verbose', 'log each request, retry and checkpoint as JSON lines on stderr', false);
}

/** A Powertools Logger writing every level to `stream` (stderr: stdout stays the command's output). */
export function stderrLogger(stream: NodeJS.WritableStream = process.stderr): Logger {
  const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? SERVICE, logLevel: 'DEBUG' });
  // The Logger prints through its own Console (stdout for info and debug); send every level to the stream.
  (logger as unknown as { console: Console }).console = new Console({ stdout: stream, stderr: stream });
  return logger;
}

/** What a command gets back from {@link verboseHooks}: a logger for the engine and the cursor store to use. */
export interface VerboseHooks {
  /** For the engine's `deps.logger`; `undefined` when not verbose. */
  readonly logger: EngineLogger | undefined;
  /** `cursors` as given, logging each checkpoint when verbose. */
  readonly cursors: (cursors: CursorStore) => CursorStore;
  /** `backfills` as given, logging each checkpoint of a range's progress when verbose. */
  readonly backfills: <T extends BackfillStore>(backfills: T) => T;
}

/**
 * With `enabled`, logs every request and retry of `http`; the returned `cursors` wraps a cursor store so each
 * checkpoint (conditional cursor write) is logged. Without it, changes nothing.
 */
export function verboseHooks(
  enabled: boolean | undefined,
  http: HttpClient,
  logger: Logger | undefined = enabled ? stderrLogger() : undefined,
): VerboseHooks {
  if (!enabled || logger === undefined)
    return { logger: undefined, cursors: (cursors) => cursors, backfills: (backfills) => backfills };
  http.onRequest = (event) => {
    const { method, url, status, ms, attempt, error, proxy } = event;
    const fields = {
      method,
      url,
      ...(status === undefined ? {} : { status }),
      ms,
      attempt,
      ...(proxy === undefined ? {} : { proxy }),
    };
    if (error === undefined) logger.info('request', fields);
    else logger.warn('request failed', { ...fields, error });
  };
  http.onRetry = ({ url, attempt, delayMs, error }) => {
    logger.warn('retry', {
      url,
      attempt,
      delayMs: Math.round(delayMs),
      why: error.reason,
      ...(error.status === undefined ? {} : { status: error.status }),
    });
  };
  const engineLogger: EngineLogger = {
    info: (message, extra) => logger.info(message, extra ?? {}),
    warn: (message, extra) => logger.warn(message, extra ?? {}),
    error: (message, extra) => logger.error(message, extra ?? {}),
    debug: (message, extra) => logger.debug(message, extra ?? {}),
  };
  return {
    logger: engineLogger,
    cursors: (cursors) => loggingCursors(cursors, logger),
    backfills: (backfills) => loggingBackfills(backfills, logger),
  };
}

/** `cursors` with each conditional write logged as a checkpoint (its outcome and time). */
function loggingCursors(cursors: CursorStore, logger: Logger): CursorStore {
  return {
    read: (name, options) => cursors.read(name, options),
    compareAndSet: async (name, expected, next, options) => {
      const started = performance.now();
      const result = await cursors.compareAndSet(name, expected, next, options);
      const ms = Math.round(performance.now() - started);
      logger.info('checkpoint', {
        cursorName: name,
        cursor: formatTimestamp(next.value),
        commitId: next.commitId,
        outcome: result.outcome,
        ms,
      });
      return result;
    },
  };
}

/** `backfills` with each write of a range's progress logged as a checkpoint; every other method as it is. */
function loggingBackfills<T extends BackfillStore>(backfills: T, logger: Logger): T {
  return new Proxy(backfills, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      if (property !== 'advanceRange') return value.bind(target);
      const advanceRange: BackfillStore['advanceRange'] = async (cursorName, backfillId, n, expected, next) => {
        const started = performance.now();
        const result = await (value as BackfillStore['advanceRange']).call(
          target,
          cursorName,
          backfillId,
          n,
          expected,
          next,
        );
        const ms = Math.round(performance.now() - started);
        logger.info('checkpoint', {
          cursorName,
          backfillId,
          range: n,
          cursor: next.progress,
          commitId: next.progressCommitId,
          outcome: result.outcome,
          ms,
        });
        return result;
      };
      return advanceRange;
    },
  });
}
