/**
 * The moving part of a sync: the function (with its log group, its own role and exactly the grants the code
 * needs), the dead-letter queue of failed runs, and the schedule that starts one run per period.
 *
 * A resource group of {@link CatalogSync}: its resources are created in the `scope` it is given (see
 * snapshot-storage.ts for why), with construct ids `Logs`, `Role`, `DeadLetters`, `Function` and `Schedule`.
 */
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, LogLevel, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { DEFAULT_MEMORY_MB } from '../defaults.js';
import { grantSourceSecretRead } from '../source-secret.js';
import { handlerCode } from './handler-entry.js';
import { grantBucketKey, grantMirrorStateRead, grantSnapshotWrites } from './mirror-grants.js';
import { nagResource } from './nag.js';

/** Properties of a {@link SyncFunction}. */
export interface SyncFunctionProps {
  /** Name of the sync's cursor (`CURSOR_NAME`): names the role's statements and the schedule's description. */
  readonly cursorName: string;

  /** Key prefix of every object the sync writes (`SNAPSHOT_PREFIX`): the function may `PutObject` under it, and read only its `filter.json` and `watermark.json`. */
  readonly prefix: string;

  /** Partition keys the function may read: its own cursor and its dependencies' (`DEPENDS_ON`). */
  readonly readableKeys: readonly string[];

  /** The cursor table: the function moves its own cursor and appends to its own run log in it. */
  readonly table: dynamodb.ITable;

  /** The snapshot bucket: the function writes leaves, manifests and quarantine records under `prefix` (and its customer key, if any, is granted). */
  readonly bucket: s3.IBucket;

  /**
   * The secret of the private feed's credentials: the function may read that one secret.
   * @default - none: a public feed
   */
  readonly sourceSecret?: secretsmanager.ISecret;

  /** The function's environment: the engine's settings, the table and bucket names, Powertools' and Node's. */
  readonly environment: Record<string, string>;

  /** The function's description. `ListFunctions` shows it to anyone allowed to list functions: no secrets in it. */
  readonly description: string;

  /** Time between two runs (an EventBridge `rate()`), at least `timeout`. */
  readonly schedule: Duration;

  /** Whether the schedule runs. */
  readonly enabled: boolean;

  /** Time limit of one run. */
  readonly timeout: Duration;

  /** How long a scheduled event may wait before it is dropped to the dead-letter queue. */
  readonly maxEventAge: Duration;

  /** Lambda runtime: Node.js 22 or newer (the bundle targets the same Node.js major). */
  readonly runtime: lambda.Runtime;

  /**
   * Memory of the function in MB.
   * @default 1024
   */
  readonly memorySize?: number;

  /**
   * Reserved concurrency of the function.
   * @default - none: the function uses the account's unreserved pool
   */
  readonly reservedConcurrency?: number;

  /**
   * Retention of the function's log group.
   * @default logs.RetentionDays.ONE_MONTH
   */
  readonly logRetention?: logs.RetentionDays;
}

/** Schedule → function, failures to a dead-letter queue; the function's role holds exactly its calls. */
export class SyncFunction {
  /** The function that runs one slice per tick. */
  readonly function: NodejsFunction;
  /** The function's log group. */
  readonly logGroup: logs.LogGroup;
  /** The function's own role (no managed policy). */
  readonly role: iam.Role;
  /** Failed runs (on-failure destination) and ticks EventBridge could not deliver (rule target DLQ). */
  readonly deadLetterQueue: sqs.Queue;
  /** The EventBridge rule that starts a run every `schedule`. */
  readonly scheduleRule: events.Rule;

  constructor(scope: Construct, props: SyncFunctionProps) {
    const { runtime, timeout, maxEventAge } = props;
    this.logGroup = new logs.LogGroup(scope, 'Logs', {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // A role of our own, so that nothing but the statements below is attached (no managed policy).
    this.role = new iam.Role(scope, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `catalog-sync ${props.cursorName}: cursor items, PutObject under its prefix, its filter and watermark, its logs${props.sourceSecret ? ', its source secret' : ''}`,
    });
    this.deadLetterQueue = new sqs.Queue(scope, 'DeadLetters', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });

    const code = handlerCode('sync/lambda');
    this.function = new NodejsFunction(scope, 'Function', {
      entry: code.entry,
      handler: 'handler',
      ...code.project,
      runtime,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySize ?? DEFAULT_MEMORY_MB,
      timeout,
      role: this.role,
      logGroup: this.logGroup,
      environment: props.environment,
      description: props.description,
      ...(props.reservedConcurrency === undefined ? {} : { reservedConcurrentExecutions: props.reservedConcurrency }),
      // Asynchronous invocation (the schedule): no retry, since the next tick is the retry and overlapping runs
      // are safe; a tick that cannot start within maxEventAge is dropped; a failed run goes to the DLQ with
      // its error (the destination record holds the request and the response, a plain DLQ only the event).
      retryAttempts: 0,
      maxEventAge,
      onFailure: new SendMessageOnly(this.deadLetterQueue),
      bundling: nodeBundling(runtime),
    });

    if (runtime.name !== latestNodeRuntime().name) {
      Validations.of(this.function).acknowledge({
        id: 'AwsSolutions-L1',
        reason: `${runtime.name} is chosen deliberately (the runtime prop; Node.js 22 by default): the bundle targets it and the project supports Node.js >= 20.18, and Node.js 22 is a maintained LTS until April 2027. Move to a newer runtime with the "runtime" prop once the tests run on it.`,
      });
    }

    this.grant(scope, props);

    this.scheduleRule = new events.Rule(scope, 'Schedule', {
      description: `catalog-sync ${props.cursorName}: one slice every ${props.schedule.toMinutes()} min`,
      schedule: events.Schedule.rate(props.schedule),
      enabled: props.enabled,
    });
    this.scheduleRule.addTarget(
      new targets.LambdaFunction(this.function, {
        // Delivery to Lambda's queue: no retry and a short age, for the same reason as above; a tick
        // EventBridge cannot deliver (permissions, function gone) lands in the same DLQ.
        retryAttempts: 0,
        maxEventAge,
        deadLetterQueue: this.deadLetterQueue,
      }),
    );
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue IS the dead-letter queue of the schedule: the on-failure destination of the function and the DLQ of the rule target. A DLQ of a DLQ would only hide failures; the dead-letter alarm watches it.',
    });
  }

  /** Exactly the calls the handler makes (lambda/stores/dynamo-store.ts, s3-store.ts), on exactly its items. */
  private grant(scope: Construct, props: SyncFunctionProps): void {
    const role = this.role;
    // The logs of this function only (no CreateLogGroup: the group exists).
    this.logGroup.grantWrite(role);
    // Its own cursor and its dependencies' (GetItem with ConsistentRead).
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'ReadCursors',
        actions: ['dynamodb:GetItem'],
        resources: [props.table.tableArn],
        conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [...props.readableKeys] } },
      }),
    );
    // Moves its own cursor (conditional UpdateItem) and appends to its own run log (PutItem). The Lambda never
    // queries the run log (only the CLI's `runs` does: see CatalogSync.grantStatusRead).
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'WriteOwnCursorAndRunLog',
        actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
        resources: [props.table.tableArn],
        conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [props.cursorName] } },
      }),
    );
    // The gate of a follower (lambda/sync/engine.ts): is a backfill of its cursor running? One Query of its own
    // items, newest first, limit 1 (lambda/stores/dynamo-backfill.ts `newestPlan`), on every run. Granted whether
    // or not this stack deploys a backfill: a backfill started from the CLI into the same table must hold the
    // follower off too.
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'FindRunningBackfill',
        actions: ['dynamodb:Query'],
        resources: [props.table.tableArn],
        conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [props.cursorName] } },
      }),
    );
    // Leaves, manifests and quarantine records in the layout's folders under its prefix, its filter.json and its
    // watermark.json: nothing else of the bucket. No deletes, no ACLs.
    grantSnapshotWrites(role, props.bucket, props.prefix, {
      watermark: true,
      why: `Every object this sync writes is named by a package and a commit, unknown in advance: PutObject (only) in the layout's folders (leaves/, commits/, quarantine/) under its own prefix "${props.prefix}" of the snapshot bucket, which no other sync writes.`,
    });
    // Its only reads, two keys: the id filter the mirror was synced with (checkIdFilter, lambda/sync/filter-record.ts,
    // once per container) and the watermark, read before each write so that it never moves back (lambda/sync/watermark.ts).
    grantMirrorStateRead(role, props.bucket, props.prefix);
    // A bucket encrypted with a customer key: the function writes (GenerateDataKey) and reads (Decrypt) through it.
    grantBucketKey(role, props.bucket, ['kms:Decrypt', 'kms:GenerateDataKey']);
    // The private feed's credentials: GetSecretValue on that one secret (and kms:Decrypt of its customer key).
    if (props.sourceSecret) {
      const secretArn = grantSourceSecretRead(role, props.sourceSecret);
      if (secretArn.endsWith('-??????')) {
        Validations.of(role).acknowledge({
          id: `AwsSolutions-IAM5[Resource::${nagResource(Stack.of(scope).resolve(secretArn))}]`,
          reason:
            'The source secret was given by name or partial ARN: "-??????" matches exactly the six characters Secrets Manager appends to that name (as AWS advises), GetSecretValue only. Give its complete ARN to drop the wildcard.',
        });
      }
    }
  }
}

/**
 * The on-failure destination, granting the function's role `sqs:SendMessage` only (the stock `SqsDestination`
 * also grants `GetQueueAttributes` and `GetQueueUrl`, which Lambda does not use to deliver).
 */
export class SendMessageOnly implements lambda.IDestination {
  constructor(private readonly queue: sqs.IQueue) {}

  bind(_scope: Construct, fn: lambda.IFunction): lambda.DestinationConfig {
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        sid: 'SendFailedRuns',
        actions: ['sqs:SendMessage'],
        resources: [this.queue.queueArn],
      }),
    );
    return { destination: this.queue.queueArn };
  }
}

/**
 * How every function of this app is bundled: by the local esbuild (no Docker), as one minified ESM file with
 * its source map, targeting the runtime's Node.js major, with the AWS SDK of package-lock.json inside.
 */
export function nodeBundling(runtime: lambda.Runtime): BundlingOptions {
  const runtimeMajor = /^nodejs(\d+)/.exec(runtime.name)?.[1];
  return {
    // No Docker engine: the esbuild of package.json (devDependency) bundles on this machine.
    forceDockerBundling: false,
    format: OutputFormat.ESM,
    target: runtimeMajor ? `node${runtimeMajor}` : 'node22',
    platform: 'node',
    mainFields: ['module', 'main'],
    minify: true,
    sourceMap: true,
    sourcesContent: false,
    // CommonJS dependencies (undici, parts of the SDK) call require(): give the ESM bundle one.
    banner:
      "import { createRequire as __catalogSyncRequire } from 'node:module'; const require = __catalogSyncRequire(import.meta.url);",
    // The AWS SDK is bundled, not taken from the runtime: the Lambda runs the version of package-lock.json
    // that the integration tests exercise (ConditionalCheckFailedException handing back the stored item;
    // S3 request checksums, whose defaults changed in 3.729), while the runtime's copy is updated by AWS
    // without notice. Cost: about 0.5 MB more bundle (1.5 MB in all).
    bundleAwsSDK: true,
    externalModules: [],
    logLevel: LogLevel.WARNING,
  };
}

/** The newest Node.js runtime this aws-cdk-lib knows (what cdk-nag's AwsSolutions-L1 asks for). */
export function latestNodeRuntime(): lambda.Runtime {
  const major = (runtime: lambda.Runtime) => Number(/^nodejs(\d+)\.x$/.exec(runtime.name)?.[1] ?? 0);
  return lambda.Runtime.ALL.filter((runtime) => major(runtime) > 0).reduce((a, b) => (major(b) > major(a) ? b : a));
}
