/**
 * How an S3SnapshotStore finds its lean PUT client without its callers changing: awsClients and
 * backpressureS3Client register the options of the S3 client they build (connections for the leaf concurrency, the
 * backfill's SlowDown hook), and each S3 client gets one {@link S3PutClient} (one connection pool), made on first
 * use and shared by every store on that client. A client nobody registered (one a test or a caller built) gets
 * {@link DEFAULT_PUT_OPTIONS}.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { S3PutClient, type S3PutOptions } from './s3-put-client.js';

/** For an S3 client built elsewhere: the SDK's default socket count. */
export const DEFAULT_PUT_OPTIONS: S3PutOptions = { connections: 50 };

const registered = new WeakMap<S3Client, S3PutOptions>();
const made = new WeakMap<S3Client, S3PutClient>();

/** Registers how lean PUTs through `client` behave; returns `client`. Call before the first PUT. */
export function withLeanPut(client: S3Client, options: S3PutOptions): S3Client {
  registered.set(client, options);
  return client;
}

/** The lean PUT client of `client` (made once per S3 client). */
export function leanPutFor(client: S3Client): S3PutClient {
  let put = made.get(client);
  if (!put) made.set(client, (put = new S3PutClient(client, registered.get(client) ?? DEFAULT_PUT_OPTIONS)));
  return put;
}
