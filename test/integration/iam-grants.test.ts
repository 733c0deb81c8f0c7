/**
 * The functions' IAM grants cover the calls their code makes. s3rver and DynamoDB Local enforce no IAM, so a grant
 * that falls short passes every other test and fails only on AWS (a watermark write refused with 403, a missing key
 * answered 403 instead of 404). Here each face runs a real scenario against the local servers through a recording
 * front (testkit/aws-request-recorder.ts) with the environment the synthesized stack gives its function; every
 * request it made is then judged against that function's role in the same template by a small IAM evaluator written
 * for the test (testkit/iam-evaluator.ts), which models S3's rule that a GET of a missing key answers 404 only to a
 * caller holding `s3:ListBucket` on the bucket.
 *
 * Faces: the follower (lambda/sync/lambda.ts) on a fresh mirror then a second run, without and with INCLUDE_IDS, with a
 * quarantined leaf; the backfill planner, worker and finalizer as the Distributed Map calls them; a consumer's, the
 * latest view's and the feed writer's Lambdas on that mirror (the feed downloads each package and writes feed/).
 */
import { fileURLToPath } from 'node:url';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogBackfill, CatalogConsumer, CatalogSync } from '../../infra/index.js';
import type { BackfillRange } from '../../lambda/contract/index.js';
import { generateCatalog, type GeneratedCatalog } from '../../testkit/catalog-generator.js';
import { FeedCatalog, mirrorCommits } from '../../testkit/feed-kit.js';
import { S3FeedStorage } from '../../lambda/feed/index.js';
import { S3ViewDocuments } from '../../lambda/view/index.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { AwsRequestRecorder, type RecordedCall } from '../../testkit/aws-request-recorder.js';
import { testServices } from '../../testkit/env.js';
import { resolve, uncovered, type TemplateNames } from '../../testkit/iam-evaluator.js';
import { SyncHarness } from '../../testkit/sync-harness.js';
import { NO_BUNDLING, NO_TEMPLATE_VALIDATION, outdir, roleStatements, type Resources } from '../infra/synth-kit.js';

const ENTRY = fileURLToPath(new URL('../infra/fixtures/consumer-entry.ts', import.meta.url));
const PREFIX = 'nuget/';
const CONSUMER = 'search-indexer';
const REGION = 'us-east-1';
const ACCOUNT = '123456789012';
const ENOUGH = { getRemainingTimeInMillis: () => 600_000 };
const scheduleEvent = { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} };

/** The stack under judgement: a sync with its view and quarantine, a consumer, a backfill; each function's role and environment. */
function synthesize(includeIds?: string[], prefix = PREFIX) {
  // The constructs' templates are validated against CloudFormation's rules by their infra tests (sync-construct,
  // consumer, backfill-construct): here only the grants are judged.
  const app = new App({ context: NO_BUNDLING, outdir: outdir(), ...NO_TEMPLATE_VALIDATION });
  const stack = new Stack(app, 'Grants', { env: { region: REGION, account: ACCOUNT } });
  const sync = new CatalogSync(stack, 'Sync', {
    prefix,
    view: true,
    quarantine: true,
    ...(includeIds ? { includeIds } : {}),
    feed: { distribution: false, writer: { baseUrl: 'https://feed.example.test/nuget/' } },
  });
  const consumer = new CatalogConsumer(stack, 'Indexer', { sync, consumerName: CONSUMER, entry: ENTRY });
  const backfill = new CatalogBackfill(stack, 'Backfill', {
    table: sync.table,
    bucket: sync.bucket,
    settings: sync.settings,
  });
  const resources = Template.fromStack(stack).toJSON().Resources as Resources;
  const id = (construct: { node: { defaultChild?: unknown } }) =>
    stack.getLogicalId(construct.node.defaultChild as never);
  const face = (fn: lambda.IFunction) => {
    const properties = resources[id(fn as never)]!.Properties;
    return {
      statements: roleStatements(resources, properties.Role['Fn::GetAtt'][0] as string),
      environment: properties.Environment.Variables as Record<string, unknown>,
    };
  };
  return {
    tableId: id(sync.table as never),
    bucketId: id(sync.bucket as never),
    follower: face(sync.function),
    consumer: face(consumer.function),
    view: face(sync.view!.function),
    feed: face(sync.feed!.writer!.function),
    planner: face(backfill.planner),
    worker: face(backfill.worker),
    finalizer: face(backfill.finalizer),
  };
}
type Face = ReturnType<typeof synthesize>['follower'];

let catalog: GeneratedCatalog;
let replica: CatalogReplica;
let s3: AwsRequestRecorder;
let dynamo: AwsRequestRecorder;
const saved = { ...process.env };
const harnesses: SyncHarness[] = [];

beforeAll(async () => {
  const services = testServices();
  [s3, dynamo] = await Promise.all([
    AwsRequestRecorder.start('s3', services.s3Endpoint),
    AwsRequestRecorder.start('dynamodb', services.dynamoEndpoint),
  ]);
  catalog = generateCatalog({ commits: 14, seed: 5150, leavesPerCommit: [1, 3], deleteRatio: 0.1 });
  replica = await CatalogReplica.start({ catalog, pageSize: 5 });
});
afterAll(async () => {
  for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
  Object.assign(process.env, saved);
  for (const harness of harnesses) {
    harness.clients.s3.destroy();
    harness.clients.dynamo.destroy();
  }
  await Promise.all([replica?.stop(), s3?.stop(), dynamo?.stop()]);
});

/** A fresh table and bucket, and the names the template's intrinsics resolve to for them. */
async function target(stack: ReturnType<typeof synthesize>): Promise<{ harness: SyncHarness; names: TemplateNames }> {
  const harness = await SyncHarness.create();
  harnesses.push(harness);
  return {
    harness,
    names: {
      region: REGION,
      account: ACCOUNT,
      tables: { [stack.tableId]: harness.table },
      buckets: { [stack.bucketId]: harness.bucket },
    },
  };
}

/** The function's environment as deployed (its intrinsics resolved to the test's names), reaching the servers through the recorders. */
function environmentOf(face: Face, harness: SyncHarness, names: TemplateNames): Record<string, string> {
  const deployed = Object.fromEntries(
    Object.entries(face.environment).map(([name, value]) => [name, resolve(value, names)]),
  );
  for (const [name, value] of Object.entries(deployed)) expect(value, name).not.toMatch(/<unresolved/);
  return {
    ...harness.env(),
    ...deployed,
    CATALOG_SOURCE: replica.serviceIndexUrl,
    AWS_ENDPOINT_URL_S3: s3.url,
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.url,
  };
}

/** Runs `action` with `env` as the process's environment (the handlers read it, as on Lambda); returns what it recorded. */
async function recording(env: Record<string, string>, action: () => Promise<unknown>): Promise<RecordedCall[]> {
  s3.take();
  dynamo.take();
  const before = { ...process.env };
  Object.assign(process.env, env);
  try {
    await action();
  } finally {
    for (const key of Object.keys(process.env)) if (!(key in before)) delete process.env[key];
    Object.assign(process.env, before);
  }
  expect([...s3.unreadable, ...dynamo.unreadable]).toEqual([]);
  return [...s3.take(), ...dynamo.take()];
}

const gets = (calls: readonly RecordedCall[], key: string) =>
  calls.filter((call) => call.service === 's3' && call.method === 'GET' && call.key === key);

const stack = synthesize();

describe('the IAM grants cover every call the functions make', () => {
  const filtered = synthesize(['A*', 'B*']);

  it('the follower: a fresh mirror, then a second run; a quarantined leaf', async () => {
    const { harness, names } = await target(stack);
    const { handler } = await import('../../lambda/sync/lambda.js');
    const env = { ...environmentOf(stack.follower, harness, names), MAX_COMMITS: '7' };
    const bad = catalog.commits[3]!.leaves[0]!;
    replica.overrideBody(bad.path, '{"@type": "PackageDetails"}', { times: 1_000 });
    const calls = await recording(env, async () => {
      try {
        expect(await handler({}, ENOUGH)).toMatchObject({ commits: 7, quarantined: 1 });
        expect(await handler({}, ENOUGH)).toMatchObject({ commits: 7, caughtUp: true });
      } finally {
        replica.clearFaults();
      }
    });
    // Its reads: filter.json (missing on a fresh mirror: 404), and the watermark before each write.
    expect(gets(calls, `${PREFIX}filter.json`).map((call) => call.status)).toContain(404);
    expect(gets(calls, `${PREFIX}watermark.json`).length).toBeGreaterThan(0);
    expect(uncovered(stack.follower.statements, calls, names)).toEqual([]);
  });

  it('the follower with INCLUDE_IDS: a fresh mirror records its filter, a second run reads it', async () => {
    const { harness, names } = await target(filtered);
    const { handler } = await import('../../lambda/sync/lambda.js');
    const env: Record<string, string> = { ...environmentOf(filtered.follower, harness, names), MAX_COMMITS: '7' };
    expect(env.INCLUDE_IDS).toBe('A*,B*');
    const calls = await recording(env, async () => {
      expect(await handler({}, ENOUGH)).toMatchObject({ commits: 7 });
      expect(await handler({}, ENOUGH)).toMatchObject({ commits: 7, caughtUp: true });
    });
    expect(
      calls.some((call) => call.service === 's3' && call.method === 'PUT' && call.key === `${PREFIX}filter.json`),
    ).toBe(true);
    expect(uncovered(filtered.follower.statements, calls, names)).toEqual([]);
  });

  it.each([
    ['without an id filter', false],
    ['with INCLUDE_IDS (the first to run records it)', true],
  ])(
    'the backfill planner, worker and finalizer, as the Distributed Map calls them, on a fresh mirror %s',
    async (_, withFilter) => {
      const faces = withFilter ? filtered : stack;
      const { harness, names } = await target(faces);
      const planner = (await import('../../lambda/backfill/lambda/planner.js')).handler;
      const worker = (await import('../../lambda/backfill/lambda/worker.js')).handler;
      const finalizer = (await import('../../lambda/backfill/lambda/finalizer.js')).handler;
      let planned: Awaited<ReturnType<typeof planner>> | undefined;
      const planning = await recording(environmentOf(faces.planner, harness, names), async () => {
        planned = await planner({ rangeLeaves: 8 });
      });
      expect(planned!.ranges).toBeGreaterThan(1);
      // The ItemReader's read of the ranges file is the state machine's role's, not a function's: not recorded.
      const object = await harness.clients.s3.send(
        new GetObjectCommand({ Bucket: planned!.bucket, Key: planned!.rangesKey }),
      );
      const items = JSON.parse(await object.Body!.transformToString('utf8')) as BackfillRange[];
      const working = await recording(environmentOf(faces.worker, harness, names), async () => {
        for (let i = 0; i < items.length; i += 2) {
          expect(
            (
              await worker(
                { Items: items.slice(i, i + 2), BatchInput: { backfillId: planned!.backfillId, passes: 0 } },
                ENOUGH,
              )
            ).done,
          ).toBe(true);
        }
      });
      const finishing = await recording(environmentOf(faces.finalizer, harness, names), async () => {
        expect(await finalizer({ backfillId: planned!.backfillId })).toMatchObject({ caughtUp: true });
      });
      for (const calls of [planning, working, finishing])
        expect(gets(calls, `${PREFIX}filter.json`).length).toBeGreaterThan(0);
      if (withFilter)
        expect(
          planning.some(
            (call) => call.service === 's3' && call.method === 'PUT' && call.key === `${PREFIX}filter.json`,
          ),
        ).toBe(true);
      expect(gets(finishing, `${PREFIX}watermark.json`).length).toBeGreaterThan(0);
      expect({
        planner: uncovered(faces.planner.statements, planning, names),
        worker: uncovered(faces.worker.statements, working, names),
        finalizer: uncovered(faces.finalizer.statements, finishing, names),
      }).toEqual({ planner: [], worker: [], finalizer: [] });
    },
  );

  it("a consumer's Lambda and the latest view's: before the first run, then on a mirror with a quarantined leaf", async () => {
    const { harness, names } = await target(stack);
    const { handler } = await import('../../lambda/sync/lambda.js');
    const { consumerHandler } = await import('../../lambda/consumer/lambda.js');
    const { viewHandler } = await import('../../lambda/view/lambda.js');
    const consumerEnv = environmentOf(stack.consumer, harness, names);
    const viewEnv = environmentOf(stack.view, harness, names);
    expect([consumerEnv.CONSUMER_NAME, viewEnv.CONSUMER_NAME]).toEqual([CONSUMER, 'view-latest']);
    const consume = () => consumerHandler(() => undefined, process.env)(scheduleEvent, ENOUGH);
    const view = () => viewHandler(process.env)(scheduleEvent, ENOUGH);
    // Deployed with the stack, both run before the follower's first watermark: nothing to read yet (404).
    const consuming = await recording(consumerEnv, async () => expect(await consume()).toMatchObject({ commits: 0 }));
    const viewing = await recording(viewEnv, async () => expect(await view()).toMatchObject({ commits: 0 }));
    expect(new Set(gets(consuming, `${PREFIX}watermark.json`).map((call) => call.status))).toEqual(new Set([404]));

    // A details leaf that stays its package's latest, set aside by quarantine: the view looks at its key (404).
    const bad = catalog.commits.flatMap((commit, i) =>
      commit.leaves.filter(
        (leaf) =>
          leaf.type === 'PackageDetails' &&
          !catalog.commits
            .slice(i + 1)
            .some((later) => later.leaves.some((other) => other.id.toLowerCase() === leaf.id.toLowerCase())),
      ),
    )[0]!;
    replica.overrideBody(bad.path, '{"@type": "PackageDetails"}', { times: 1_000 });
    try {
      await recording(environmentOf(stack.follower, harness, names), async () =>
        expect(await handler({}, ENOUGH)).toMatchObject({ caughtUp: true, quarantined: 1 }),
      );
    } finally {
      replica.clearFaults();
    }
    consuming.push(
      ...(await recording(consumerEnv, async () =>
        expect(await consume()).toMatchObject({ commits: catalog.commits.length, stoppedBy: 'caught-up' }),
      )),
    );
    viewing.push(
      ...(await recording(viewEnv, async () =>
        expect(await view()).toMatchObject({ commits: catalog.commits.length, stoppedBy: 'caught-up' }),
      )),
    );
    // The view reads each package's index before it exists, and the quarantined leaf's key: both 404.
    const missing = viewing
      .filter((call) => call.service === 's3' && call.status === 404)
      .map((call) => (call as { key: string }).key);
    expect(missing.some((key) => key.startsWith(`${PREFIX}packages/`))).toBe(true);
    expect(missing.some((key) => key.startsWith(`${PREFIX}leaves/`) && key.includes(bad.id.toLowerCase()))).toBe(true);
    expect({
      consumer: uncovered(stack.consumer.statements, consuming, names),
      view: uncovered(stack.view.statements, viewing, names),
    }).toEqual({ consumer: [], view: [] });
  });

  it("the feed writer's Lambda: packages downloaded and stored with their documents, then a delete and an unlist", async () => {
    const { harness, names } = await target(stack);
    const built = new FeedCatalog();
    built.commit([
      { id: 'Grants.A', version: '1.0.0' },
      { id: 'Grants.A', version: '2.0.0' },
      { id: 'Grants.B', version: '1.0.0' },
    ]);
    // The replica serves the catalog as it grows: the second commit is made after the first is in the feed.
    const source = await CatalogReplica.start({ catalog: built.catalog });
    try {
      // The mirror and its view written in process (not recorded); the feed's Lambda after each commit (recorded).
      const mirror = { store: harness.snapshots, prefix: PREFIX, where: `s3://${harness.bucket}/${PREFIX}` };
      const place = {
        store: harness.snapshots,
        cursors: harness.store,
        documents: new S3ViewDocuments(harness.bucket, harness.clients.s3),
        mirror,
        storage: new S3FeedStorage(harness.bucket, harness.clients.s3),
      };
      const { feedHandler } = await import('../../lambda/feed/lambda.js');
      const env = { ...environmentOf(stack.feed, harness, names), CATALOG_SOURCE: source.serviceIndexUrl };
      const feeding: RecordedCall[] = [];
      const later = () =>
        built.commit([
          { id: 'Grants.A', version: '1.0.0', delete: true },
          { id: 'Grants.B', version: '1.0.0', listed: false },
        ]);
      for (const commit of [built.catalog.commits[0]!, later]) {
        await mirrorCommits(place, [typeof commit === 'function' ? commit() : commit]);
        feeding.push(
          ...(await recording(env, async () =>
            expect(await feedHandler(process.env)(scheduleEvent, ENOUGH)).toMatchObject({ commits: 1 }),
          )),
        );
      }
      const s3Calls = feeding.filter((call) => call.service === 's3');
      const nupkg = `${PREFIX}feed/flat/grants.a/1.0.0/grants.a.1.0.0.nupkg`;
      expect(s3Calls.filter((call) => call.key === nupkg).map((call) => call.method)).toEqual(['PUT', 'DELETE']);
      expect(uncovered(stack.feed.statements, feeding, names)).toEqual([]);
    } finally {
      await source.stop();
    }
  });
});

describe('the writers may write the layout, nothing else of the bucket', () => {
  // The stack under a prefix is the one the scenarios above run in; the default empty prefix is synthesized here.
  it.each([
    ['under a prefix', PREFIX, () => stack],
    ['under the default empty prefix (the whole bucket before)', '', () => synthesize(undefined, '')],
  ])('the follower and the backfill worker %s', (_, prefix, facesOf) => {
    const faces = facesOf();
    const names: TemplateNames = {
      region: REGION,
      account: ACCOUNT,
      tables: { [faces.tableId]: 'cursors' },
      buckets: { [faces.bucketId]: 'mirror' },
    };
    const putKey = (key: string): RecordedCall => ({
      service: 's3',
      method: 'PUT',
      bucket: 'mirror',
      key,
      status: 200,
    });
    const put = (key: string): RecordedCall => putKey(`${prefix}${key}`);
    const layout = [
      'leaves/001e9fzMHc3F/newtonsoft.json/13.0.1.json',
      'commits/001e9fzMHc3F.json',
      'quarantine/001e9fzMHc3F/x/1.0.0.json',
      'filter.json',
    ];
    // Elsewhere: the latest view's folder, the backfill's ranges files and map results, another key beside the layout, another app's key.
    const elsewhere = [
      'packages/newtonsoft.json/index.json',
      'backfill/001xWrYP2tEPmg4D/ranges.json',
      'backfill/map-runs/m/manifest.json',
      'leaves.json',
      'index.html',
      'watermark.json.bak',
    ];
    for (const face of [faces.follower, faces.worker]) {
      expect(uncovered(face.statements, layout.map(put), names)).toEqual([]);
      for (const key of elsewhere) expect(uncovered(face.statements, [put(key)], names), key).toHaveLength(1);
      expect(uncovered(face.statements, [putKey('other/leaves/a/b/1.0.0.json')], names)).toHaveLength(1);
    }
    // The watermark is the follower's to write (and the backfill finalizer's), not a range worker's.
    expect(uncovered(faces.follower.statements, [put('watermark.json')], names)).toEqual([]);
    expect(uncovered(faces.worker.statements, [put('watermark.json')], names)).toHaveLength(1);
  });
});
