/**
 * Grants on the snapshot bucket that several functions share: the reads of the mirror's state (its id filter and its
 * watermark), `s3:ListBucket` so that a GET of a missing key answers 404 rather than 403, and the bucket's customer
 * key. Used by the follower (sync-function.ts), the backfill (catalog-backfill.ts) and the consumers
 * (catalog-consumer.ts, latest-view.ts). test/integration/iam-grants.test.ts checks them against the calls the code makes.
 */
import { Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { filterKeyOf, SNAPSHOT_FOLDERS, watermarkKeyOf } from '../../lambda/contract/index.js';
import { nagResource } from './nag.js';

/**
 * `s3:PutObject` (only) on what a writer of snapshots writes under `prefix`, and nowhere else in the bucket (under
 * the default empty prefix, not the whole bucket): the layout's folders `leaves/`, `commits/` and `quarantine/`,
 * `filter.json` (the first run on a mirror records its id filter) and, when `watermark` (the follower), the key
 * `watermark.json`. The run log is in the table, not the bucket. cdk-nag's finding on each folder's wildcard is
 * acknowledged with `why`.
 */
export function grantSnapshotWrites(
  role: iam.Role,
  bucket: s3.IBucket,
  prefix: string,
  o: { readonly watermark: boolean; readonly why: string },
): void {
  const folders = SNAPSHOT_FOLDERS.map((folder) => bucket.arnForObjects(`${prefix}${folder}*`));
  const keys = [filterKeyOf(prefix), ...(o.watermark ? [watermarkKeyOf(prefix)] : [])].map((key) =>
    bucket.arnForObjects(key),
  );
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({ sid: 'PutSnapshots', actions: ['s3:PutObject'], resources: [...folders, ...keys] }),
  );
  for (const arn of folders) {
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${nagResource(Stack.of(role).resolve(arn))}]`,
      reason: o.why,
    });
  }
}

/**
 * GetObject of the mirror's `{prefix}filter.json` and `{prefix}watermark.json` (those two keys only), and
 * `s3:ListBucket` on the bucket, without a condition. Both keys are missing on a fresh mirror and the code reads a
 * 404 as "absent"; S3 answers a GET of a missing key with 404 only to a caller allowed `s3:ListBucket` on the
 * bucket, and with 403 AccessDenied to anyone else. A ListBucket conditioned on `s3:prefix` does not count: a
 * GetObject has no `s3:prefix` in its request context. The price: the role may list the bucket's keys (names, not
 * contents). Used by the follower and the backfill's functions.
 */
export function grantMirrorStateRead(role: iam.Role, bucket: s3.IBucket, prefix: string): void {
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      sid: 'ReadMirrorState',
      actions: ['s3:GetObject'],
      resources: [bucket.arnForObjects(filterKeyOf(prefix)), bucket.arnForObjects(watermarkKeyOf(prefix))],
    }),
  );
  grantMissingKeys(role, bucket);
}

/**
 * The bucket's customer key (`bucket.encryptionKey`), if it has one: exactly the KMS calls S3 makes for the role, on
 * that key: `kms:GenerateDataKey` for a PUT, `kms:Decrypt` for a GET (no `*` actions, as `grantEncryptDecrypt` would
 * give). An imported bucket known by name alone brings no key: grant it yourself (docs/deploy.md).
 */
export function grantBucketKey(
  grantee: iam.IGrantable,
  bucket: s3.IBucket,
  actions: ReadonlyArray<'kms:Decrypt' | 'kms:GenerateDataKey'>,
): void {
  if (!bucket.encryptionKey) return;
  // One Sid per kind of use: the view's role holds the consumer's Decrypt and its own GenerateDataKey, and IAM refuses
  // a policy with two statements of one Sid.
  const sid =
    actions.length > 1
      ? 'UseBucketKey'
      : actions[0] === 'kms:Decrypt'
        ? 'DecryptWithBucketKey'
        : 'EncryptWithBucketKey';
  grantee.grantPrincipal.addToPrincipalPolicy(
    new iam.PolicyStatement({ sid, actions: [...actions], resources: [bucket.encryptionKey.keyArn] }),
  );
}

/**
 * `s3:ListBucket` on the bucket, without a condition: what turns S3's answer to a GET of a missing key from 403
 * AccessDenied into 404 NoSuchKey, which the code reads as "absent" (see {@link grantMirrorStateRead}).
 */
export function grantMissingKeys(grantee: iam.IGrantable, bucket: s3.IBucket): void {
  grantee.grantPrincipal.addToPrincipalPolicy(
    new iam.PolicyStatement({ sid: 'SeeMissingKeys', actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }),
  );
}
