/**
 * Where a named consumer's cursor and lease are kept (contract.md, "What is stored where"): keyed by the mirror it
 * reads and its name, so two mirrors sharing one table or one folder never share a consumer. Shared by the consumer,
 * the CLI and the CDK constructs (their IAM grants name these keys).
 */
import { FEED_CONSUMER } from './feed.js';
import { VIEW_CONSUMER } from './view.js';

/** The first segment of every consumer cursor's key. */
export const CONSUMER_KEY_PREFIX = 'consumer#';
/** The sort key of a consumer's lease item, beside its cursor item (`sk` = `cursor`). */
export const LEASE_SK = 'lease';

/**
 * Where the consumers of a mirror are kept apart from every other mirror's: `s3://{bucket}/{prefix}` for a bucket,
 * `./{prefix}` for a local folder (whose cursors live in the folder itself).
 */
export function mirrorKeyOf(location: string, prefix: string): string {
  return `${location}/${prefix}`;
}

/**
 * The key of a named consumer's cursor (DynamoDB `pk`, the folder's entry in `state.json`):
 * `consumer#{mirror}#{name}`, e.g. `consumer#s3://my-mirror/nuget/#search` or `consumer#.//#printer`. A name holds
 * no `#`, so the name is what follows the last one.
 */
export function consumerCursorKey(mirrorKey: string, name: string): string {
  return `${CONSUMER_KEY_PREFIX}${mirrorKey}#${name}`;
}

/** The name in a consumer cursor's key of `mirrorKey`, or undefined when the key is not one of that mirror's. */
export function consumerNameOf(key: string, mirrorKey: string): string | undefined {
  const head = `${CONSUMER_KEY_PREFIX}${mirrorKey}#`;
  if (!key.startsWith(head)) return undefined;
  const name = key.slice(head.length);
  return name === '' || name.includes('#') ? undefined : name;
}

/**
 * Consumer names catalog-sync runs itself, which a user's consumer may not take (it would move their cursor): the
 * latest view's and the private feed's. A user's consumer may depend on them.
 */
export const BUILT_IN_CONSUMERS: readonly string[] = [VIEW_CONSUMER, FEED_CONSUMER];
