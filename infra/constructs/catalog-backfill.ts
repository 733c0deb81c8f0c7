/**
 * `CatalogBackfill`: the whole catalog in minutes, on a Step Functions Distributed Map (issue 12; docs/deploy.md,
 * Backfill). A STANDARD state machine:
 *
 *   Plan (planner Lambda: reads the index once, writes `<prefix>backfill/<id>/ranges.json` and the plan item)
 *   → Ranges (Distributed Map: ItemReader = that JSON array in S3, ItemBatcher = `batchSize` ranges per worker
 *     invocation with `{ backfillId }` as BatchInput, MaxConcurrency = `maxConcurrency`, no failure tolerated;
 *     each batch a STANDARD child execution: RunBatch → BatchDone? → (not done: Again → RunBatch) | BatchDone,
 *     whose output is `{"done": true}` alone; the results written to `<prefix>backfill/map-runs/` by a ResultWriter)
 *   → Finish (finalizer Lambda: every range done, then the cursor moves to B, watermark, run log; any error
 *     retried 3 times);
 *   a failed map, or a Finish that still fails → Release (the finalizer gives the plan's lease back) → Failed;
 *   a Plan refused because another execution holds the plan (CS_ERR_BACKFILL_RUNNING) → AlreadyRunning (Succeed).
 *
 * Usable alone (give it a table and a bucket) or next to a {@link CatalogSync} sharing its table, bucket and
 * settings (the app does that with `-c catalog-sync:backfill=true`). Each function has its own role with
 * exactly its calls; the state machine's role may invoke the three functions, read the ranges objects, write the
 * map runs' results under their prefix and start/describe/stop its own map run's child executions. A bucket with a
 * customer key (`bucket.encryptionKey`) has it granted to every role.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { Construct } from 'constructs';
import {
  backfillResultsPrefix,
  DEFAULT_CURSOR_NAME,
  DEFAULT_METRICS_NAMESPACE,
  DEFAULT_SOURCE,
  filterKeyOf,
  redactUrl,
  SOURCE_SECRET_ENV,
  watermarkKeyOf,
} from '../../lambda/contract/index.js';
import { checkBackfillProps, type CatalogBackfillProps } from './catalog-backfill-props.js';
import {
  DEFAULT_BACKFILL_BATCH_SIZE,
  DEFAULT_BACKFILL_MAX_CONCURRENCY,
  DEFAULT_BACKFILL_MAX_PASSES,
  DEFAULT_BACKFILL_WORKER_MEMORY_MB,
  DEFAULT_BACKFILL_WORKER_TIMEOUT,
} from '../defaults.js';
import { grantSourceSecretRead } from '../source-secret.js';
import { backfillDefinition } from './backfill-definition.js';
import { grantBucketKey, grantMirrorStateRead, grantSnapshotWrites } from './mirror-grants.js';
import { failedExecutionsAlarm, grantItems, grantMachine, grantObjects, machineFunction } from './state-machine-kit.js';

/** The backfill's state machine, its three functions and its alarm. */
export class CatalogBackfill extends Construct {
  readonly stateMachine: sfn.StateMachine;
  readonly planner: NodejsFunction;
  readonly worker: NodejsFunction;
  readonly finalizer: NodejsFunction;
  /** Fires on a failed, timed-out or aborted execution (not on a refused double start: it ends in AlreadyRunning). */
  readonly failedAlarm: cloudwatch.Alarm;
  readonly cursorName: string;
  /** Powertools service name of its functions: the `service` dimension of the worker's EMF metrics. */
  readonly serviceName: string;
  readonly prefix: string;
  readonly maxConcurrency: number;
  readonly batchSize: number;

  constructor(scope: Construct, id: string, props: CatalogBackfillProps) {
    super(scope, id);
    // The map's ResultWriter is CDK's V2 one: rendered only with this flag, set here for this subtree alone (before
    // any child exists), whatever the app's own flags.
    this.node.setContext(cxapi.STEPFUNCTIONS_USE_DISTRIBUTED_MAP_RESULT_WRITER_V2, true);
    this.cursorName = props.cursorName ?? props.settings?.CURSOR_NAME ?? DEFAULT_CURSOR_NAME;
    this.prefix = props.prefix ?? props.settings?.SNAPSHOT_PREFIX ?? '';
    this.maxConcurrency = props.maxConcurrency ?? DEFAULT_BACKFILL_MAX_CONCURRENCY;
    this.batchSize = props.batchSize ?? DEFAULT_BACKFILL_BATCH_SIZE;
    const runtime = props.runtime ?? lambda.Runtime.NODEJS_22_X;
    const workerTimeout = props.workerTimeout ?? DEFAULT_BACKFILL_WORKER_TIMEOUT;
    const maxPasses = props.maxPasses ?? DEFAULT_BACKFILL_MAX_PASSES;
    const settings: Record<string, string> = {
      ...props.settings,
      CATALOG_SOURCE: props.source ?? props.settings?.CATALOG_SOURCE ?? DEFAULT_SOURCE,
      CURSOR_NAME: this.cursorName,
      SNAPSHOT_PREFIX: this.prefix,
    };
    checkBackfillProps(this.node.path, settings, {
      prefix: this.prefix,
      maxConcurrency: this.maxConcurrency,
      batchSize: this.batchSize,
      workerTimeout,
      maxPasses,
      runtime,
      props,
    });
    const serviceName = (this.serviceName = `catalog-sync-${this.cursorName}-backfill`);
    const environment: Record<string, string> = {
      ...settings,
      ...(props.sourceSecret ? { [SOURCE_SECRET_ENV]: props.sourceSecret.secretArn } : {}),
      CURSOR_TABLE: props.table.tableName,
      SNAPSHOT_BUCKET: props.bucket.bucketName,
      POWERTOOLS_SERVICE_NAME: serviceName,
      POWERTOOLS_METRICS_NAMESPACE: DEFAULT_METRICS_NAMESPACE,
      NODE_OPTIONS: '--enable-source-maps',
    };
    const retention = props.logRetention ?? logs.RetentionDays.ONE_MONTH;
    const fn = (
      name: 'Planner' | 'Worker' | 'Finalizer',
      entry: string,
      o: { memorySize: number; timeout: Duration; reserved?: number },
    ) => {
      const made = machineFunction(this, {
        name,
        handler: `backfill/lambda/${entry}`,
        runtime,
        ...o,
        environment,
        retention,
        description: `catalog-sync backfill ${name.toLowerCase()}: cursor ${this.cursorName} of ${redactUrl(settings.CATALOG_SOURCE!)}`,
        roleDescription: `catalog-sync ${this.cursorName} backfill ${name.toLowerCase()}: its cursor's items, its prefix, its logs`,
      });
      // Every function reads the feed (the finalizer its index: the head past a plan's `until`), and each reads the
      // secret it is given in SOURCE_SECRET_ARN when it starts.
      if (props.sourceSecret) grantSourceSecretRead(made.role, props.sourceSecret);
      return made;
    };
    const planner = fn('Planner', 'planner', { memorySize: 1_024, timeout: Duration.minutes(5) });
    const worker = fn('Worker', 'worker', {
      memorySize: props.workerMemorySize ?? DEFAULT_BACKFILL_WORKER_MEMORY_MB,
      timeout: workerTimeout,
      ...(props.workerReservedConcurrency === undefined ? {} : { reserved: props.workerReservedConcurrency }),
    });
    const finalizer = fn('Finalizer', 'finalizer', { memorySize: 512, timeout: Duration.minutes(5) });
    this.planner = planner.f;
    this.worker = worker.f;
    this.finalizer = finalizer.f;

    // --- exactly the calls each function makes (lambda/stores/dynamo-store.ts, s3-store.ts) ---------------
    const dependsOn = (settings.DEPENDS_ON ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== '');
    const items = (role: iam.Role, sid: string, actions: string[], keys: string[] = [this.cursorName]) =>
      grantItems(role, props.table, sid, actions, keys);
    const objects = (role: iam.Role, sid: string, actions: string[], under: string, why: string) =>
      grantObjects(this, role, props.bucket, sid, actions, under, why);
    const rangesPrefix = `${this.prefix}backfill/`;
    // Planner: its cursor and its dependencies' (GetItem), the newest plan (Query), the active-plan item and the
    // plan item (conditional PutItem), its lease and an abandoned plan (UpdateItem);
    // writes the ranges file and reads it back when it resumes a plan.
    items(planner.role, 'ReadCursors', ['dynamodb:GetItem'], [this.cursorName, ...dependsOn]);
    items(planner.role, 'PlanItems', ['dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem']);
    objects(
      planner.role,
      'RangesFile',
      ['s3:PutObject', 's3:GetObject'],
      rangesPrefix,
      `The plan's ranges file is named by the backfill's id, unknown in advance: PutObject and GetObject under "${rangesPrefix}" only.`,
    );
    // Worker: the range items (GetItem; progress and done: conditional UpdateItem) and the plan's lease; leaves,
    // manifests and quarantine records in the layout's folders, as the follower writes them, and filter.json (the
    // first to run on a mirror records its filter). Not watermark.json: the finalizer writes it.
    items(worker.role, 'RangeItems', ['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    grantSnapshotWrites(worker.role, props.bucket, this.prefix, {
      watermark: false,
      why: `Every object a range writes is named by a package and a commit, unknown in advance: PutObject (only) in the layout's folders (leaves/, commits/, quarantine/) under the sync's prefix "${this.prefix}", as the follower's function.`,
    });
    // Finalizer: the plan, every range (Query), the cursor and the active-plan item (conditional UpdateItem), the run
    // log (PutItem), the lease given back after a failed map (UpdateItem); filter.json and watermark.json (those keys).
    items(finalizer.role, 'FinishItems', [
      'dynamodb:GetItem',
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
    ]);
    // The planner finishes a plan with no range at once (B at the cursor), so it writes the watermark too. Both record
    // the id filter in filter.json when they are the first to run on a mirror (checkIdFilter; the worker's grant
    // names filter.json too).
    const mirrorState = [
      props.bucket.arnForObjects(filterKeyOf(this.prefix)),
      props.bucket.arnForObjects(watermarkKeyOf(this.prefix)),
    ];
    for (const role of [planner.role, finalizer.role]) {
      role.addToPrincipalPolicy(
        new iam.PolicyStatement({ sid: 'PutFilterAndWatermark', actions: ['s3:PutObject'], resources: mirrorState }),
      );
    }
    // All three read filter.json (checkIdFilter, lambda/backfill/lambda/warm.ts) and the watermark (the filter check; before
    // each watermark write, which never moves it back): GetObject of those two keys, and ListBucket on the bucket so
    // that a missing one answers 404, not 403 (mirror-grants.ts says why).
    for (const role of [planner.role, worker.role, finalizer.role])
      grantMirrorStateRead(role, props.bucket, this.prefix);
    // The follower's gate (a Query of its cursor's items) is the follower's own grant: infra/constructs/sync-function.ts.
    // A bucket encrypted with a customer key: the functions write (GenerateDataKey) and read (Decrypt) through it.
    // (An imported bucket known by name alone brings no key: grant it yourself, docs/deploy.md.)
    for (const role of [planner.role, worker.role, finalizer.role])
      grantBucketKey(role, props.bucket, ['kms:Decrypt', 'kms:GenerateDataKey']);

    // --- the state machine ----------------------------------------------------------------------------------
    const definition = backfillDefinition(this, {
      planner: this.planner,
      worker: this.worker,
      finalizer: this.finalizer,
      maxConcurrency: this.maxConcurrency,
      batchSize: this.batchSize,
      maxPasses,
      resultsBucket: props.bucket,
      resultsPrefix: backfillResultsPrefix(this.prefix),
    });
    const machineLogs = new logs.LogGroup(this, 'StateMachineLogs', { retention, removalPolicy: RemovalPolicy.RETAIN });
    const role = new iam.Role(this, 'StateMachineRole', {
      assumedBy: new iam.ServicePrincipal('states.amazonaws.com'),
      description: `catalog-sync ${this.cursorName} backfill: invoke its three functions, read its ranges files, run its map`,
    });
    this.stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      stateMachineType: sfn.StateMachineType.STANDARD,
      comment: `catalog-sync backfill of cursor ${this.cursorName}`,
      definitionBody: sfn.DefinitionBody.fromChainable(definition),
      timeout: props.timeout ?? Duration.hours(24),
      role,
      tracingEnabled: true,
      logs: { destination: machineLogs, level: sfn.LogLevel.ALL, includeExecutionData: false },
    });
    grantMachine(this, this.stateMachine, role, {
      bucket: props.bucket,
      itemsPrefix: rangesPrefix,
      itemsSid: 'ReadRanges',
      itemsWhy: `The Distributed Map's ItemReader reads the plan's ranges file, named by the backfill's id: GetObject under "${rangesPrefix}" only.`,
      resultsPrefix: backfillResultsPrefix(this.prefix),
      functions: [this.planner, this.worker, this.finalizer],
    });

    // --- the alarm --------------------------------------------------------------------------------------------
    this.failedAlarm = failedExecutionsAlarm(
      this,
      'FailedAlarm',
      this.stateMachine,
      `catalog-sync ${this.cursorName}: a backfill execution failed, timed out or was aborted (the cursor did not move past a range not done; start it again to resume)`,
      props.alarmTopic,
    );
  }

  /** Starting the backfill (the CLI's `--state-machine`): StartExecution on this state machine only. */
  grantStart(grantee: iam.IGrantable): iam.Grant {
    return this.stateMachine.grantStartExecution(grantee);
  }
}
