/**
 * `ViewRebuild`: the latest view rebuilt from the mirror's manifests on a Step Functions state machine, in minutes at
 * nuget.org's size (issue 32; docs/deploy.md, "Rebuild the view on AWS"). A STANDARD state machine:
 *
 *   Plan (planner Lambda: the mirror's rebuild lease; `commits/` listed up to the watermark's commit and cut into
 *     ranges; `<prefix>view-rebuild/<id>/ranges.json` and `shards.json`, and the plan item) → Running?
 *     (another execution or a CLI holds the lease: AlreadyRunning, a Succeed)
 *   → Records (Distributed Map over ranges.json: each range's manifests to one record object per shard)
 *   → Indexes (Distributed Map over shards.json: each shard's records folded, its packages' indexes written)
 *   → Finish (finalizer Lambda: every item done, then view-latest's cursor moves up to the bound; retried on every
 *     error);
 *   a failed map, or a Finish that still fails → Release (the lease given back at once) → Failed.
 *
 * Off by default: `CatalogSync`'s `viewRebuild: true` (with `view: true`), or the app's `-c catalog-sync:view-rebuild=true`.
 * Each function has its own role with exactly its calls: the planner may not write `packages/`, the worker writes
 * only `packages/` and `view-rebuild/`, and only the planner (abandon) and the finalizer delete, under
 * `view-rebuild/` alone. A bucket with a customer key has it granted to every role.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { Construct } from 'constructs';
import {
  consumerCursorKey,
  DEFAULT_METRICS_NAMESPACE,
  mirrorKeyOf,
  VIEW_CONSUMER,
  VIEW_KEYS,
  VIEW_PROBE_KEY,
  VIEW_STATE_KEY,
} from '../../lambda/contract/index.js';
import { viewRebuildPrefix, viewRebuildResultsPrefix } from '../../lambda/contract/view-rebuild.js';
import type { ConsumableSync } from './consumable-sync.js';
import { grantBucketKey, grantMirrorStateRead, grantMissingKeys } from './mirror-grants.js';
import { failedExecutionsAlarm, grantItems, grantMachine, grantObjects, machineFunction } from './state-machine-kit.js';
import { viewRebuildDefinition } from './view-rebuild-definition.js';

/** Properties of {@link ViewRebuild}. */
export interface ViewRebuildProps {
  /** The sync whose mirror's view is rebuilt (its table, bucket and prefix). */
  readonly sync: ConsumableSync;
  /** Children of the Records map at once (ranges of 25,000 manifests). @default 16 */
  readonly recordsConcurrency?: number;
  /** Children of the Indexes map at once. @default 32 */
  readonly indexesConcurrency?: number;
  /** Shards a batch of the Indexes map holds (ranges: one a batch). @default 2 */
  readonly shardsPerBatch?: number;
  /** The worker's memory (MB). @default 1769 (one vCPU) */
  readonly workerMemorySize?: number;
  /** The worker's reserved concurrency. @default - none */
  readonly workerReservedConcurrency?: number;
  /** Times a batch may come back not done before the map fails. @default 20 */
  readonly maxPasses?: number;
  readonly runtime?: lambda.Runtime;
  readonly logRetention?: logs.RetentionDays;
  /** Where the failed-execution alarm is sent. */
  readonly alarmTopic?: sns.ITopic;
  /** An execution's time limit. @default 6 hours */
  readonly timeout?: Duration;
}

/** The view rebuild's state machine, its three functions and its alarm. */
export class ViewRebuild extends Construct {
  readonly stateMachine: sfn.StateMachine;
  readonly planner: NodejsFunction;
  readonly worker: NodejsFunction;
  readonly finalizer: NodejsFunction;
  /** Fires on a failed, timed-out or aborted execution (not on a refused double start: AlreadyRunning). */
  readonly failedAlarm: cloudwatch.Alarm;
  /** Powertools service name of its functions: the `service` dimension of the worker's EMF metrics. */
  readonly serviceName = 'catalog-sync-view-rebuild';

  constructor(scope: Construct, id: string, props: ViewRebuildProps) {
    super(scope, id);
    // The maps' ResultWriter is CDK's V2 one: rendered only with this flag, set for this subtree alone.
    this.node.setContext(cxapi.STEPFUNCTIONS_USE_DISTRIBUTED_MAP_RESULT_WRITER_V2, true);
    const { sync } = props;
    const { bucket, table, prefix } = sync;
    const runtime = props.runtime ?? lambda.Runtime.NODEJS_22_X;
    const retention = props.logRetention ?? logs.RetentionDays.ONE_MONTH;
    const environment: Record<string, string> = {
      CONSUMER_NAME: VIEW_CONSUMER,
      CURSOR_NAME: sync.cursorName,
      CURSOR_TABLE: table.tableName,
      SNAPSHOT_BUCKET: bucket.bucketName,
      SNAPSHOT_PREFIX: prefix,
      POWERTOOLS_SERVICE_NAME: this.serviceName,
      POWERTOOLS_METRICS_NAMESPACE: DEFAULT_METRICS_NAMESPACE,
      NODE_OPTIONS: '--enable-source-maps',
    };
    const fn = (
      name: 'Planner' | 'Worker' | 'Finalizer',
      o: { memorySize: number; timeout: Duration; reserved?: number },
    ) =>
      machineFunction(this, {
        name,
        handler: `view/lambda/rebuild-${name.toLowerCase()}`,
        runtime,
        ...o,
        environment,
        retention,
        description: `catalog-sync view rebuild ${name.toLowerCase()}: ${VIEW_CONSUMER} of the mirror under "${prefix}"`,
        roleDescription: `catalog-sync view rebuild ${name.toLowerCase()}: its plan's items, its prefixes, its logs`,
      });
    const planner = fn('Planner', { memorySize: 1_769, timeout: Duration.minutes(5) });
    const worker = fn('Worker', {
      memorySize: props.workerMemorySize ?? 1_769,
      timeout: Duration.minutes(15),
      ...(props.workerReservedConcurrency === undefined ? {} : { reserved: props.workerReservedConcurrency }),
    });
    const finalizer = fn('Finalizer', { memorySize: 512, timeout: Duration.minutes(5) });
    this.planner = planner.f;
    this.worker = worker.f;
    this.finalizer = finalizer.f;

    // --- exactly the calls each function makes (lambda/view/rebuild/, lambda/stores/dynamo-backfill.ts) ---------
    // The plan, its lease, its items and the view consumer's cursor: all under the view consumer's key.
    const planKey = consumerCursorKey(mirrorKeyOf(`s3://${bucket.bucketName}`, prefix), VIEW_CONSUMER);
    const files = viewRebuildPrefix(prefix);
    const under = (folder: string) => `${prefix}${folder}`;
    // Planner: the newest plan (Query), the plan and claim items (GetItem, conditional PutItem, UpdateItem), the
    // cursor (GetItem); the watermark (the bound), commits/ listed and the bound's manifest read; the items files
    // written and read back when it resumes, and removed when asked to abandon.
    grantItems(
      planner.role,
      table,
      'PlanItems',
      ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
      [planKey],
    );
    grantMirrorStateRead(planner.role, bucket, prefix);
    grantObjects(
      this,
      planner.role,
      bucket,
      'ReadManifests',
      ['s3:GetObject'],
      under('commits/'),
      `The bound's manifest, named by its commit: GetObject under "${under('commits/')}" only.`,
    );
    grantObjects(
      this,
      planner.role,
      bucket,
      'ItemsFiles',
      ['s3:PutObject', 's3:GetObject', 's3:DeleteObject'],
      files,
      `The plan's items files are named by the rebuild's id, unknown in advance: PutObject, GetObject and (abandon) DeleteObject under "${files}" only.`,
    );
    // Worker: the plan and its item states (GetItem; done and the lease: conditional UpdateItem); manifests, leaves,
    // the records and the indexes read; the records and the indexes written (ListBucket unconditioned: a missing
    // index answers 404, not 403).
    grantItems(worker.role, table, 'ItemStates', ['dynamodb:GetItem', 'dynamodb:UpdateItem'], [planKey]);
    grantMissingKeys(worker.role, bucket);
    for (const [sid, folder] of [
      ['ReadManifests', 'commits/'],
      ['ReadLeaves', 'leaves/'],
    ] as const)
      grantObjects(
        this,
        worker.role,
        bucket,
        sid,
        ['s3:GetObject'],
        under(folder),
        `Named by commits and packages, unknown in advance: GetObject under "${under(folder)}" only.`,
      );
    grantObjects(
      this,
      worker.role,
      bucket,
      'Records',
      ['s3:GetObject', 's3:PutObject'],
      files,
      `The rebuild's records are named by its id, shards and ranges: GetObject and PutObject under "${files}" only.`,
    );
    grantObjects(
      this,
      worker.role,
      bucket,
      'WriteView',
      ['s3:GetObject', 's3:PutObject'],
      under(VIEW_KEYS.replace(/\*$/, '')),
      `One index per package, ids unknown in advance: GetObject and PutObject (conditional) under "${under('packages/')}" only.`,
    );
    // Finalizer: the plan and every item (Query, GetItem), the cursor (conditional UpdateItem/PutItem), the plan
    // finished and its claim cleared, the lease given back (UpdateItem); the records listed and deleted.
    grantItems(
      finalizer.role,
      table,
      'FinishItems',
      ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
      [planKey],
    );
    grantMissingKeys(finalizer.role, bucket);
    grantObjects(
      this,
      finalizer.role,
      bucket,
      'RemoveRecords',
      ['s3:DeleteObject'],
      files,
      `The rebuild's records and items files, named by its id: DeleteObject under "${files}" only.`,
    );
    // Worker and finalizer: the view's staleness (filter.json's history, view.json read and, when it records what it
    // saw or what the rebuild cleared, written with its compare-and-swap) and the conditional-PUT probe the view's
    // writers put once before their first write.
    for (const role of [worker.role, finalizer.role]) {
      grantMirrorStateRead(role, bucket, prefix);
      role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          sid: 'ViewState',
          actions: ['s3:GetObject', 's3:PutObject'],
          resources: [
            bucket.arnForObjects(`${prefix}${VIEW_STATE_KEY}`),
            bucket.arnForObjects(`${prefix}${VIEW_PROBE_KEY}`),
          ],
        }),
      );
    }
    for (const role of [planner.role, worker.role, finalizer.role])
      grantBucketKey(role, bucket, ['kms:Decrypt', 'kms:GenerateDataKey']);

    // --- the state machine ----------------------------------------------------------------------------------
    const maxPasses = props.maxPasses ?? 20;
    const definition = viewRebuildDefinition(this, {
      planner: this.planner,
      worker: this.worker,
      finalizer: this.finalizer,
      records: { maxConcurrency: props.recordsConcurrency ?? 16, batchSize: 1 },
      indexes: { maxConcurrency: props.indexesConcurrency ?? 32, batchSize: props.shardsPerBatch ?? 2 },
      maxPasses,
      resultsBucket: bucket,
      resultsPrefix: viewRebuildResultsPrefix(prefix),
    });
    const machineLogs = new logs.LogGroup(this, 'StateMachineLogs', { retention, removalPolicy: RemovalPolicy.RETAIN });
    const role = new iam.Role(this, 'StateMachineRole', {
      assumedBy: new iam.ServicePrincipal('states.amazonaws.com'),
      description: 'catalog-sync view rebuild: invoke its three functions, read its items files, run its maps',
    });
    this.stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      stateMachineType: sfn.StateMachineType.STANDARD,
      comment: `catalog-sync rebuild of the latest view (${VIEW_CONSUMER})`,
      definitionBody: sfn.DefinitionBody.fromChainable(definition),
      timeout: props.timeout ?? Duration.hours(6),
      role,
      tracingEnabled: true,
      logs: { destination: machineLogs, level: sfn.LogLevel.ALL, includeExecutionData: false },
    });
    grantMachine(this, this.stateMachine, role, {
      bucket,
      itemsPrefix: files,
      itemsSid: 'ReadItemsFiles',
      itemsWhy: `The maps' ItemReaders read the plan's ranges.json and shards.json, named by the rebuild's id: GetObject under "${files}" only.`,
      resultsPrefix: viewRebuildResultsPrefix(prefix),
      functions: [this.planner, this.worker, this.finalizer],
    });

    // --- the alarm --------------------------------------------------------------------------------------------
    this.failedAlarm = failedExecutionsAlarm(
      this,
      'RebuildFailedAlarm',
      this.stateMachine,
      `catalog-sync ${VIEW_CONSUMER}: a view rebuild execution failed, timed out or was aborted (its lease was given back; the view cursor did not move: start it again to resume)`,
      props.alarmTopic,
    );
  }

  /** Starting the rebuild (the CLI's `view --rebuild --state-machine`): StartExecution on this state machine only. */
  grantStart(grantee: iam.IGrantable): iam.Grant {
    return this.stateMachine.grantStartExecution(grantee);
  }
}
