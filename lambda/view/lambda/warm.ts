/**
 * What the view rebuild's three handlers share: the view consumer's settings (runtime/lambda-settings.ts, as the
 * view's own function reads them: `CONSUMER_NAME`, `CURSOR_TABLE`, `SNAPSHOT_BUCKET`, `SNAPSHOT_PREFIX`), the
 * rebuild's stores (the mirror, the view consumer's cursor, the plan store in the sync's table, the records under
 * `{prefix}view-rebuild/`, the view's documents), kept warm between invocations, and the Powertools logger.
 */
import { consumerLambdaSettings, type ConsumerLambdaSettings } from '../../runtime/lambda-settings.js';
import { lambdaLogger } from '../../runtime/powertools.js';
import { deferWasmTierUp } from '../../runtime/wasm-tiering.js';
import { awsClients } from '../../stores/aws-clients.js';
import { awsViewStores } from '../open.js';
import type { RebuildStores } from '../rebuild/index.js';

/** The service name when `POWERTOOLS_SERVICE_NAME` is unset (the construct sets this one). */
export const REBUILD_SERVICE = 'catalog-sync-view-rebuild';

export const logger = lambdaLogger(process.env, REBUILD_SERVICE);

/** Requests in flight to S3 and DynamoDB: the shard's body reads and index writes (64 each) and the listing's. */
export const REBUILD_SOCKETS = 128;

/** A warm container's settings and stores. */
export interface RebuildWarm {
  readonly settings: ConsumerLambdaSettings;
  readonly stores: RebuildStores;
}

let warm: { key: string; made: RebuildWarm } | undefined;

/** The settings and stores for `env` (made once per container, again only when the environment changed). */
export function warmUp(env: NodeJS.ProcessEnv): RebuildWarm {
  const key = JSON.stringify(env, Object.keys(env).sort());
  if (warm?.key === key) return warm.made;
  // A Lambda's process: its first invocation should not pay for compiling undici's HTTP parser twice.
  deferWasmTierUp();
  const settings = consumerLambdaSettings(env);
  const stores = awsViewStores(
    {
      bucket: settings.bucket,
      prefix: settings.prefix,
      cursorTable: settings.table,
      clients: awsClients(env, REBUILD_SOCKETS),
    },
    env,
  );
  warm = { key, made: { settings, stores } };
  return warm.made;
}
