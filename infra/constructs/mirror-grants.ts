/**
 * Grants on the snapshot bucket that several functions share: the reads of the mirror's state (its id filter and its
 * watermark), `s3:ListBucket` so that a GET of a missing key answers 404 rather than 403, and the bucket's customer
 * key. Used by the follower (sync-function.ts), the backfill (catalog-backfill.ts) and the consumers
 * (catalog-consumer.ts, latest-view.ts). test/integration/iam-grants.test.ts checks them against the calls the code makes.
 */
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { filterKeyOf, watermarkKeyOf } from '../../lambda/contract/index.js';

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
    new iam.PolicyStatement({ sid: 'ReadMirrorState', actions: ['s3:GetObject'], resources: [bucket.arnForObjects(filterKeyOf(prefix)), bucket.arnForObjects(watermarkKeyOf(prefix))] }),
  );
  grantMissingKeys(role, bucket);
}

/**
 * The bucket's customer key (`bucket.encryptionKey`), if it has one: exactly the KMS calls S3 makes for the role, on
 * that key: `kms:GenerateDataKey` for a PUT, `kms:Decrypt` for a GET (no `*` actions, as `grantEncryptDecrypt` would
 * give). An imported bucket known by name alone brings no key: grant it yourself (docs/deploy.md).
 */
export function grantBucketKey(grantee: iam.IGrantable, bucket: s3.IBucket, actions: ReadonlyArray<'kms:Decrypt' | 'kms:GenerateDataKey'>): void {
  if (!bucket.encryptionKey) return;
  // One Sid per kind of use: the view's role holds the consumer's Decrypt and its own GenerateDataKey, and IAM refuses
  // a policy with two statements of one Sid.
  const sid = actions.length > 1 ? 'UseBucketKey' : actions[0] === 'kms:Decrypt' ? 'DecryptWithBucketKey' : 'EncryptWithBucketKey';
  grantee.grantPrincipal.addToPrincipalPolicy(new iam.PolicyStatement({ sid, actions: [...actions], resources: [bucket.encryptionKey.keyArn] }));
}

/**
 * `s3:ListBucket` on the bucket, without a condition: what turns S3's answer to a GET of a missing key from 403
 * AccessDenied into 404 NoSuchKey, which the code reads as "absent" (see {@link grantMirrorStateRead}).
 */
export function grantMissingKeys(grantee: iam.IGrantable, bucket: s3.IBucket): void {
  grantee.grantPrincipal.addToPrincipalPolicy(new iam.PolicyStatement({ sid: 'SeeMissingKeys', actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }));
}
