/**
 * What a `CatalogBackfill` is given: its props, every one documented with its default, and their check at
 * synth (the engine's settings as the functions will read them, the map's bounds, the worker's limits, the runtime),
 * which throws a {@link CatalogSyncPropsError} naming the construct and the prop.
 */
import { Token, type Duration } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { parseSettings, SettingsError } from '../../lambda/contract/index.js';
import { CatalogSyncPropsError } from '../catalog-sync-props.js';

/** Properties of a `CatalogBackfill`. */
export interface CatalogBackfillProps {
  /** The cursor table (pk/sk): the plan, range and cursor items live in it. */
  readonly table: dynamodb.ITable;
  /** The snapshot bucket: leaves and manifests under `prefix`, and the plan's ranges file. */
  readonly bucket: s3.IBucket;
  /** @default '' */
  readonly prefix?: string;
  /** @default 'https://api.nuget.org/v3/index.json' */
  readonly source?: string;
  /** The cursor the backfill moves when it finishes. @default 'catalog-to-s3' */
  readonly cursorName?: string;
  /**
   * More engine settings (lambda/contract/settings.ts: START_CURSOR, CONCURRENCY, QUARANTINE, ALLOWED_ORIGINS,
   * RUN_LOG_DAYS...), e.g. a {@link CatalogSync}'s `settings`. `source`, `cursorName` and `prefix` win over them.
   * @default - the engine's defaults
   */
  readonly settings?: Readonly<Record<string, string>>;
  /** The private feed's credentials (as CatalogSync's `sourceSecret`). @default - a public feed */
  readonly sourceSecret?: secretsmanager.ISecret;
  /** Range workers at once: the Distributed Map's MaxConcurrency (1 to 1,000). @default 24 (see defaults.ts) */
  readonly maxConcurrency?: number;
  /** Ranges per worker invocation: the ItemBatcher's MaxItemsPerBatch (1 to 100). @default 4 */
  readonly batchSize?: number;
  /** Memory of the range worker in MB. @default 1769 (one vCPU) */
  readonly workerMemorySize?: number;
  /** Time limit of one worker invocation (1 to 15 minutes). @default 15 minutes */
  readonly workerTimeout?: Duration;
  /**
   * Reserved concurrency of the range worker: the workers can never be starved by other functions of the account
   * (the follower among them), nor take more than this. Must be at least `maxConcurrency`, and the account must keep
   * 100 unreserved. @default - none: the workers share the account's pool (and are retried when throttled)
   */
  readonly workerReservedConcurrency?: number;
  /** How often a batch may come back not done before the execution fails. @default 20 */
  readonly maxPasses?: number;
  /** The execution's time limit. @default 24 hours */
  readonly timeout?: Duration;
  /** SNS topic notified when the failed-execution alarm fires and clears. @default - none */
  readonly alarmTopic?: sns.ITopic;
  /** Retention of the functions' and the state machine's logs. @default one month */
  readonly logRetention?: logs.RetentionDays;
  /** @default lambda.Runtime.NODEJS_22_X */
  readonly runtime?: lambda.Runtime;
}

/** Throws {@link CatalogSyncPropsError} (the message names `path` and the prop) when a prop cannot be deployed. */
export function checkBackfillProps(
  path: string,
  settings: Record<string, string>,
  o: {
    prefix: string;
    maxConcurrency: number;
    batchSize: number;
    workerTimeout: Duration;
    maxPasses: number;
    runtime: lambda.Runtime;
    props: CatalogBackfillProps;
  },
): void {
  const fail = (message: string): never => {
    throw new CatalogSyncPropsError(`${path}: ${message}`);
  };
  if (!Object.values(settings).some((value) => Token.isUnresolved(value))) {
    try {
      parseSettings(settings);
    } catch (error) {
      if (error instanceof SettingsError) fail(error.message);
      throw error;
    }
  }
  if (/[*?$]/.test(o.prefix))
    fail(`prefix ${JSON.stringify(o.prefix)} must not hold *, ? or $ (IAM wildcards and variables)`);
  const whole = (name: string, value: number, lo: number, hi: number) => {
    if (!Number.isInteger(value) || value < lo || value > hi)
      fail(`${name} must be a whole number from ${lo} to ${hi} (got ${value})`);
  };
  whole('maxConcurrency', o.maxConcurrency, 1, 1_000);
  whole('batchSize', o.batchSize, 1, 100);
  whole('maxPasses', o.maxPasses, 1, 1_000);
  if (o.props.workerReservedConcurrency !== undefined)
    whole('workerReservedConcurrency', o.props.workerReservedConcurrency, o.maxConcurrency, 10_000);
  if (o.props.workerMemorySize !== undefined) whole('workerMemorySize', o.props.workerMemorySize, 128, 10_240);
  const seconds = o.workerTimeout.toSeconds();
  if (seconds < 60 || seconds > 900)
    fail(`workerTimeout must be from 1 to 15 minutes (got ${o.workerTimeout.toHumanString()})`);
  const major = Number(/^nodejs(\d+)/.exec(o.runtime.name)?.[1] ?? NaN);
  if (!(major >= 22)) fail(`runtime must be Node.js 22 or newer (got ${o.runtime.name})`);
}
