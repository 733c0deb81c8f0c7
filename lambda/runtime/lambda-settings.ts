/**
 * Every Lambda's settings, from its environment, read in one place and with the same checks: the follower's and the
 * backfill's (the engine's settings, where state lives, the run log's days; a private feed's credentials join the
 * source) and a named consumer's (the latest view's too: a consumer's names are checked as cursor names, its
 * `SNAPSHOT_PREFIX` as the follower's is). Each error names its variable.
 */
import {
  DEFAULT_CURSOR_NAME,
  ENV_NAMES,
  parseRunLogDays,
  parseSettings,
  SettingsError,
  type SyncSettings,
} from '../contract/index.js';
import { withSourceCredentials, type SourceCredentials } from './source-secret.js';

/**
 * The Lambda's settings beyond the engine's own: where state lives. `credentials`, read from the secret of
 * SOURCE_SECRET_ARN, join the source URL.
 */
export function lambdaSettings(
  env: NodeJS.ProcessEnv,
  credentials?: SourceCredentials,
): { settings: SyncSettings; table: string; bucket: string; runLogDays: number } {
  const parsed = parseSettings(env);
  const settings = credentials ? withSourceCredentials(env, parsed, credentials) : parsed;
  const table = env.CURSOR_TABLE?.trim();
  if (!table) throw new SettingsError('CURSOR_TABLE', 'is required: the DynamoDB table holding the cursor');
  const bucket = env.SNAPSHOT_BUCKET?.trim();
  if (!bucket) throw new SettingsError('SNAPSHOT_BUCKET', 'is required: the S3 bucket receiving the snapshots');
  return { settings, table, bucket, runLogDays: parseRunLogDays(env.RUN_LOG_DAYS) };
}

/** A named consumer's function's settings (the latest view's too), from its environment. */
export interface ConsumerLambdaSettings {
  readonly consumerName: string;
  readonly table: string;
  readonly bucket: string;
  readonly prefix: string;
  readonly dependsOn: readonly string[];
  readonly checkpointEvery: number;
  readonly followerCursor: string;
}

/** A named consumer's settings (the `CatalogConsumer` construct sets them), each error naming its variable. */
export function consumerLambdaSettings(env: NodeJS.ProcessEnv): ConsumerLambdaSettings {
  const required = (name: string, what: string): string => {
    const value = env[name]?.trim();
    if (!value) throw new SettingsError(name, `is required: ${what}`);
    return value;
  };
  const every = env.CHECKPOINT_EVERY?.trim() || '1';
  if (!/^\d+$/.test(every) || Number(every) < 1)
    throw new SettingsError('CHECKPOINT_EVERY', `${JSON.stringify(every)} must be a whole number >= 1`);
  // The follower's checks: the consumer's name and those it depends on are cursor names (and it depends not on
  // itself), the prefix a key prefix; CURSOR_NAME, the follower's cursor, a cursor name.
  const checked = parseSettings(
    {
      CURSOR_NAME: required('CONSUMER_NAME', "the name of the consumer's cursor"),
      DEPENDS_ON: env.DEPENDS_ON,
      SNAPSHOT_PREFIX: env.SNAPSHOT_PREFIX,
    },
    { ...ENV_NAMES, CURSOR_NAME: 'CONSUMER_NAME' },
  );
  return {
    consumerName: checked.cursorName,
    table: required('CURSOR_TABLE', 'the DynamoDB table holding the cursors'),
    bucket: required('SNAPSHOT_BUCKET', 'the S3 bucket of the mirror'),
    prefix: checked.prefix,
    dependsOn: checked.dependsOn,
    checkpointEvery: Number(every),
    followerCursor: parseSettings({ CURSOR_NAME: env.CURSOR_NAME?.trim() || DEFAULT_CURSOR_NAME }).cursorName,
  };
}
