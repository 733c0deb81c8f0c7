/**
 * The state of a sync: the cursor table and the snapshot bucket (with the bucket of its server access logs),
 * each created unless given.
 *
 * A resource group of {@link CatalogSync}, like the others in this folder: its resources are created in the
 * `scope` it is given (the CatalogSync), not under a construct of its own, so that their logical ids stay
 * those of the deployed stacks (a construct in between would rename, hence replace, the table and bucket).
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';

/** Properties of a {@link SnapshotStorage}. */
export interface SnapshotStorageProps {
  /**
   * The cursor table to use instead of creating one. It needs `pk`/`sk` string keys and TTL on `expiresAt`.
   * @default - a table is created (on-demand, point-in-time recovery, TTL, retained)
   */
  readonly table?: dynamodb.ITable;

  /**
   * The snapshot bucket to use instead of creating one.
   * @default - a bucket is created (no public access, TLS only, encrypted, versioned, logged, retained)
   */
  readonly bucket?: s3.IBucket;

  /**
   * Bucket receiving the snapshot bucket's server access logs (only when the bucket is created here).
   * @default - a bucket is created for them, keeping logs `accessLogsRetention`
   */
  readonly accessLogsBucket?: s3.IBucket;

  /**
   * How long server access logs are kept in the access-logs bucket created here.
   * @default Duration.days(90)
   */
  readonly accessLogsRetention?: Duration;

  /**
   * How long noncurrent object versions are kept in the bucket created here.
   * @default Duration.days(30)
   */
  readonly noncurrentVersionRetention?: Duration;
}

/** The cursor table and the snapshot bucket: construct ids `Table`, `AccessLogs` and `Snapshots` in `scope`. */
export class SnapshotStorage {
  /** The cursor table (created here or given). */
  readonly table: dynamodb.ITable;
  /** The snapshot bucket (created here or given). */
  readonly bucket: s3.IBucket;
  /** The bucket of the snapshot bucket's server access logs, when the snapshot bucket was created here. */
  readonly accessLogsBucket?: s3.IBucket;

  constructor(scope: Construct, props: SnapshotStorageProps = {}) {
    this.table = props.table ?? createTable(scope);
    if (props.bucket) {
      this.bucket = props.bucket;
    } else {
      const created = createBucket(scope, props);
      this.bucket = created.bucket;
      this.accessLogsBucket = created.logs;
    }
  }
}

function createTable(scope: Construct): dynamodb.Table {
  return new dynamodb.Table(scope, 'Table', {
    partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
    sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    timeToLiveAttribute: 'expiresAt',
    // Encrypted at rest with the AWS owned key (the default): no KMS permission nor cost for the function.
    deletionProtection: true,
    removalPolicy: RemovalPolicy.RETAIN,
  });
}

function createBucket(scope: Construct, props: SnapshotStorageProps): { bucket: s3.Bucket; logs?: s3.IBucket } {
  let logsBucket = props.accessLogsBucket;
  if (!logsBucket) {
    const created = new s3.Bucket(scope, 'AccessLogs', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      // Server access logs can only be delivered to SSE-S3 buckets.
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [{ expiration: props.accessLogsRetention ?? Duration.days(90) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // No AwsSolutions-S1 finding here: cdk-nag recognises an access-log destination bucket.
    logsBucket = created;
  }
  const bucket = new s3.Bucket(scope, 'Snapshots', {
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    encryption: s3.BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    minimumTLSVersion: 1.2,
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    versioned: true,
    serverAccessLogsBucket: logsBucket,
    serverAccessLogsPrefix: 'snapshots/',
    lifecycleRules: [
      { noncurrentVersionExpiration: props.noncurrentVersionRetention ?? Duration.days(30) },
      { abortIncompleteMultipartUploadAfter: Duration.days(1) },
    ],
    removalPolicy: RemovalPolicy.RETAIN,
  });
  // Object events to EventBridge, set on the bucket itself: `eventBridgeEnabled` would add a custom
  // resource (a Lambda with s3:PutBucketNotification on *) to do what CloudFormation does natively.
  (bucket.node.defaultChild as s3.CfnBucket).notificationConfiguration = {
    eventBridgeConfiguration: { eventBridgeEnabled: true },
  };
  return { bucket, logs: logsBucket };
}
