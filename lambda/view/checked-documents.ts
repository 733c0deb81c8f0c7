/**
 * The view's S3 documents behind the conditional-PUT check: the stale-writer guard is S3's `If-Match` /
 * `If-None-Match`, which a server that ignores them silently turns off. So before the first write of a process to a
 * bucket and prefix, {@link requireConditionalPut} writes `{prefix}view-conditional-put-check` with preconditions
 * that must fail (`stores/conditional-put-check.ts`), and a server that stores them anyway is refused with
 * {@link ConditionalPutError}: nothing of the view is written. The answer is kept per S3 client: later writes pay
 * nothing. A folder needs no check: its compare-and-swap is the view lock's.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { VIEW_PROBE_KEY } from '../contract/view.js';
import { probeConditionalPut } from '../stores/conditional-put-check.js';
import { ConditionalPutError } from './errors.js';
import { S3ViewDocuments } from './s3-view-documents.js';
import type { StoredDocument, ViewDocuments } from './view-documents.js';

/** Checks made or under way, per client, by `bucket/probe key`. A refusal is kept; a failure to ask is not. */
const checks = new WeakMap<S3Client, Map<string, Promise<void>>>();

/**
 * Resolves once the server behind `client` is known to honour conditional PUTs in `bucket` (asked once per client,
 * bucket and prefix).
 * @throws {@link ConditionalPutError} when it stores a PUT whose precondition must fail (or answers 501); the SDK's
 * error when it could not be asked (the next call asks again).
 */
export function requireConditionalPut(client: S3Client, bucket: string, prefix: string): Promise<void> {
  const key = `${prefix}${VIEW_PROBE_KEY}`;
  let byKey = checks.get(client);
  if (byKey === undefined) {
    byKey = new Map();
    checks.set(client, byKey);
  }
  const id = `${bucket}/${key}`;
  let check = byKey.get(id);
  if (check === undefined) {
    const asked = probeConditionalPut(client, bucket, key).then((verdict) => {
      if (!verdict.honoured) throw new ConditionalPutError(`s3://${id}`, verdict.condition, verdict.answer);
    });
    check = asked.catch((error: unknown) => {
      if (!(error instanceof ConditionalPutError)) byKey.delete(id);
      throw error;
    });
    byKey.set(id, check);
  }
  return check;
}

/** Documents whose every write waits for `check` first (reads do not: they change nothing). */
export class CheckedViewDocuments implements ViewDocuments {
  readonly where: string;
  constructor(
    private readonly documents: ViewDocuments,
    private readonly check: () => Promise<void>,
  ) {
    this.where = documents.where;
  }

  read(key: string): Promise<StoredDocument | undefined> {
    return this.documents.read(key);
  }

  async writeIf(key: string, bytes: Buffer, expected: string | undefined): Promise<boolean> {
    await this.check();
    return this.documents.writeIf(key, bytes, expected);
  }
}

/** The view's documents in `bucket` under `prefix`, refused on a server that ignores conditional PUTs. */
export function checkedS3ViewDocuments(bucket: string, client: S3Client, prefix: string): ViewDocuments {
  return new CheckedViewDocuments(new S3ViewDocuments(bucket, client), () =>
    requireConditionalPut(client, bucket, prefix),
  );
}
