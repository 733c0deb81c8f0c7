/**
 * The synthesized view rebuild state machine (the app with `-c catalog-sync:view-rebuild=true`) run as it is by the
 * small ASL interpreter (testkit/asl-runner.ts), with the real planner, worker and finalizer handlers against
 * DynamoDB Local (or dynalite) and s3rver, on a generated catalog mirrored straight into the bucket: its indexes
 * byte for byte those upkeep writes; a second start while one holds the lease ends in AlreadyRunning; a Finish that
 * fails is retried, and one that keeps failing gives the lease back; a failed map's plan is resumed by the rerun.
 */
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumerKey } from '../../../lambda/consumer/consumer-cursors.js';
import type { Mirror } from '../../../lambda/consumer/index.js';
import { commitKeyOf } from '../../../lambda/contract/keys.js';
import { formatTimestamp, parseTimestamp } from '../../../lambda/contract/time.js';
import { S3ViewDocuments, keepView } from '../../../lambda/view/index.js';
import { packageIndexKey } from '../../../lambda/view/view-keys.js';
import { AslFailure, PAYLOAD_LIMIT, runDefinition, type AslTrace, type AslWorld } from '../../../testkit/asl-runner.js';
import { generateCatalog } from '../../../testkit/catalog-generator.js';
import { mulberry32 } from '../../../testkit/prng.js';
import { SyncHarness } from '../../../testkit/sync-harness.js';
import { decorate, expectedView, writeMirror } from '../../../testkit/view-mirror.js';
import { AwsRequestRecorder, type RecordedCall } from '../../../testkit/aws-request-recorder.js';
import { testServices } from '../../../testkit/env.js';
import { resolve, uncovered, type TemplateNames } from '../../../testkit/iam-evaluator.js';
import { definitionOf, roleStatements, synth, type Json, type Synthesized } from '../../infra/synth-kit.js';

const ENOUGH = { getRemainingTimeInMillis: () => 600_000 };
const NO_TIME = { getRemainingTimeInMillis: () => 5_000 }; // the safety margin takes all of it
const INPUT = { shards: 3, rangeManifests: 8 };

type Handler = (payload: Json, context: typeof ENOUGH) => Promise<Json>;
type Wrap = (call: (context?: typeof ENOUGH) => Promise<Json>, payload: Json, invocation: number) => Promise<Json>;
const plain: Wrap = (call) => call();

describe('the synthesized view rebuild definition, run with the real handlers', () => {
  const catalog = generateCatalog({
    commits: 36,
    seed: 3232,
    leavesPerCommit: [1, 4],
    deleteRatio: 0.2,
    sameMillisecondPairs: 2,
    bomRatio: 0.2,
  });
  const decorations = decorate(catalog.commits, mulberry32(3232), 0.3);
  let harness: SyncHarness;
  let definition: Json;
  let synthesized: Synthesized;
  let mirror: Mirror;
  const saved = { ...process.env };
  let handlers: { planner: Handler; worker: Handler; finalizer: Handler };

  beforeAll(async () => {
    harness = await SyncHarness.create();
    mirror = { store: harness.snapshots, prefix: '', where: `s3://${harness.bucket}/` };
    await writeMirror(harness.snapshots, '', catalog.commits);
    // The template's CloudFormation validation is the infra tests': test/infra/view-rebuild.test.ts's (the construct)
    // and alarm-routing's (the app with catalog-sync:view-rebuild). Here only the definition runs and the roles are read.
    synthesized = synth({ 'catalog-sync:view-rebuild': true }, { validate: false });
    definition = definitionOf(synthesized, harness.bucket);
    Object.assign(process.env, harness.env({ CONSUMER_NAME: 'view-latest', SNAPSHOT_PREFIX: '' }));
    handlers = {
      planner: (await import('../../../lambda/view/lambda/rebuild-planner.js')).handler as unknown as Handler,
      worker: (await import('../../../lambda/view/lambda/rebuild-worker.js')).handler as unknown as Handler,
      finalizer: (await import('../../../lambda/view/lambda/rebuild-finalizer.js')).handler as unknown as Handler,
    };
  });
  afterAll(() => {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
    harness.clients.s3.destroy();
    harness.clients.dynamo.destroy();
  });

  /** A world whose Lambdas are the handlers (each may be wrapped), JSON in and out as Lambda's. */
  function world(wrap: { planner?: Wrap; worker?: Wrap; finalizer?: Wrap } = {}): AslWorld {
    const calls = { planner: 0, worker: 0, finalizer: 0 };
    return {
      async invoke(arn, payload) {
        const input = JSON.parse(JSON.stringify(payload));
        const name = /ViewRebuildPlanner/.test(arn)
          ? 'planner'
          : /ViewRebuildWorker/.test(arn)
            ? 'worker'
            : /ViewRebuildFinalizer/.test(arn)
              ? 'finalizer'
              : undefined;
        if (name === undefined) throw new Error(`no function ${arn}`);
        const n = ++calls[name];
        const result = await (wrap[name] ?? plain)((context = ENOUGH) => handlers[name](input, context), input, n);
        return JSON.parse(JSON.stringify(result));
      },
      async getObject(bucket, key) {
        const object = await harness.clients.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        return object.Body!.transformToString('utf8');
      },
      async putObject(bucket, key, body) {
        await harness.clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
      },
    };
  }

  async function keys(under: string): Promise<string[]> {
    const found: string[] = [];
    for await (const key of harness.snapshots.listKeys(under)) found.push(key);
    return found;
  }

  async function viewBytes(): Promise<Map<string, Buffer>> {
    const bytes = new Map<string, Buffer>();
    for (const key of await keys('packages/')) bytes.set(key, (await harness.snapshots.getBytes(key))!);
    return bytes;
  }

  const planName = () => consumerKey(mirror, 'view-latest');
  const newTrace = (): AslTrace => ({ states: [], retries: [], children: [] });

  it('Plan → Records → Indexes → Finish: the indexes upkeep writes, byte for byte; the cursor at the bound; the records gone', async () => {
    const trace = newTrace();
    // The first batch gets no time: it comes back not done and its map loops it (Again).
    const summary = await runDefinition(
      definition,
      INPUT,
      world({ worker: (call, _payload, n) => call(n === 1 ? NO_TIME : ENOUGH) }),
      trace,
    );
    const last = catalog.commits.at(-1)!;
    expect(summary).toMatchObject({
      commits: catalog.commits.length,
      shards: 3,
      ranges: Math.ceil(catalog.commits.length / 8),
      cursorMoved: true,
      cursorAfter: formatTimestamp(parseTimestamp(last.timestamp)),
    });
    expect((await harness.store.read(planName()))?.value).toBe(parseTimestamp(last.timestamp));
    expect(trace.states.filter((state) => state === 'RecordsAgain')).toHaveLength(1);
    // One child a range (Records), two shards a child (Indexes), each ending with {"done": true} alone.
    expect(trace.children).toHaveLength(summary.ranges + Math.ceil(3 / 2));
    for (const child of trace.children) expect(child.output).toEqual({ done: true });
    const manifest = JSON.parse(
      await harness.snapshots.getBytes('view-rebuild/map-runs/map-run-1/manifest.json').then(String),
    );
    expect(manifest.ResultFiles.SUCCEEDED).toHaveLength(1);
    expect(await keys(`view-rebuild/${summary.rebuildId}/`)).toEqual([]);

    const rebuilt = await viewBytes();
    const expected = expectedView('', catalog.commits, decorations);
    expect([...rebuilt.keys()].sort()).toEqual(
      [...expected.values()].map((index) => packageIndexKey('', (index as { id: string }).id)).sort(),
    );
    for (const index of expected.values())
      expect(JSON.parse(rebuilt.get(packageIndexKey('', (index as { id: string }).id))!.toString('utf8'))).toEqual(
        index,
      );
    // Upkeep into an empty view (a consumer of its own, from nothing): the same bytes.
    for (const key of rebuilt.keys()) await harness.snapshots.deleteKey(key);
    const documents = new S3ViewDocuments(harness.bucket, harness.clients.s3);
    await keepView({ documents, prefix: '' }, { mirror, cursors: harness.store, name: 'upkeep-check' });
    expect(await viewBytes()).toEqual(rebuilt);
  });

  it('a second start while the first holds the lease ends in AlreadyRunning, naming the holder; the first finishes', async () => {
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    let waiting: () => void = () => undefined;
    const reached = new Promise<void>((resolve) => {
      waiting = resolve;
    });
    const first = 'arn:aws:states:us-east-1:123456789012:execution:ViewRebuild:first';
    const running = runDefinition(
      definition,
      INPUT,
      world({
        worker: async (call, _payload, n) => {
          if (n === 1) {
            waiting();
            await gate;
          }
          return call();
        },
      }),
      newTrace(),
      first,
    );
    await reached;
    const trace = newTrace();
    const refused = await runDefinition(definition, {}, world(), trace);
    expect(trace.states).toEqual(['Plan', 'Running?', 'AlreadyRunning']);
    expect(refused).toMatchObject({ running: true, holder: first });
    open();
    expect(await running).toMatchObject({ cursorMoved: false });
  });

  it('a Finish that fails is retried; one that keeps failing gives the lease back at once, and the rerun finishes', async () => {
    const failing = (name: string) => Object.assign(new Error('the store did not answer'), { name });
    const trace = newTrace();
    const error = await runDefinition(
      definition,
      INPUT,
      world({ finalizer: (call, payload) => (payload.release ? call() : Promise.reject(failing('Error'))) }),
      trace,
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AslFailure);
    expect(trace.states.slice(-3)).toEqual(['Finish', 'Release', 'Failed']);
    expect(trace.retries.filter((retry) => retry.state === 'Finish')).toHaveLength(6);
    const plan = (await harness.store.newestPlan(planName()))!;
    expect(plan.status).toBe('running');
    expect(plan.leaseUntil).toBeLessThanOrEqual(Date.now());

    const again = newTrace();
    const summary = await runDefinition(
      definition,
      {},
      world({
        finalizer: (call, _payload, n) => (n === 1 ? Promise.reject(failing('Lambda.ServiceException')) : call()),
      }),
      again,
    );
    expect(summary.rebuildId).toBe(plan.backfillId);
    expect(again.retries).toContainEqual(
      expect.objectContaining({ state: 'Finish', error: 'Lambda.ServiceException' }),
    );
    expect((await harness.store.newestPlan(planName()))!.status).toBe('finished');
  });

  it('a failed map gives the lease back; the rerun resumes its plan, skipping the done ranges', async () => {
    const trace = newTrace();
    const error = await runDefinition(
      definition,
      INPUT,
      world({
        worker: (call, payload) =>
          payload.BatchInput.phase === 'indexes'
            ? Promise.reject(Object.assign(new Error('shard failed'), { name: 'ViewError' }))
            : call(),
      }),
      trace,
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AslFailure);
    expect(trace.states.slice(-2)).toEqual(['Release', 'Failed']);
    const plan = (await harness.store.newestPlan(planName()))!;
    expect(plan.leaseUntil).toBeLessThanOrEqual(Date.now());

    const outcomes: Json[] = [];
    const summary = await runDefinition(
      definition,
      {},
      world({
        worker: async (call) => {
          const outcome = await call();
          outcomes.push(outcome);
          return outcome;
        },
      }),
    );
    expect(summary.rebuildId).toBe(plan.backfillId);
    const ranges = outcomes.flatMap((outcome) => outcome.items).filter((item: Json) => item.n < summary.ranges);
    expect(ranges).toHaveLength(summary.ranges);
    for (const range of ranges) expect(range.skipped).toBe(true);
  });

  it("at nuget.org's size (160 ranges of 25,000 manifests, 256 shards) every batch and the maps' results fit", () => {
    const holder = `arn:aws:states:us-east-1:123456789012:execution:${'ViewRebuildStateMachine'.padEnd(80, 'x')}:${'e'.repeat(36)}`;
    const range = (n: number) => ({
      n,
      lo: commitKeyOf('2019-03-08T07:46:13.8311924Z'),
      hi: commitKeyOf('2019-04-08T07:46:13.8311924Z'),
      manifests: 25_000,
    });
    const batchInput = (phase: string) => ({ rebuildId: '0NbYQ3xR9kZq7W', phase, leaseHolder: holder, passes: 19 });
    const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
    for (const [map, items] of [
      ['Records', [range(159)]],
      [
        'Indexes',
        [
          { n: 414, shard: 254 },
          { n: 415, shard: 255 },
        ],
      ],
    ] as const) {
      const batcher = definition.States[map].ItemBatcher;
      const batch = { Items: items.slice(0, batcher.MaxItemsPerBatch), BatchInput: batchInput(map.toLowerCase()) };
      expect(bytes(batch)).toBeLessThan(batcher.MaxInputBytesPerBatch / 100);
    }
    // Every child's output, were there no ResultWriter: 160 + 128 children of {"done":true}.
    expect(bytes(Array(160 + 128).fill({ done: true }))).toBeLessThan(PAYLOAD_LIMIT / 50);
    // ranges.json at its smallest ranges (1,000 manifests: 4,000 ranges) is an S3 object, not a payload: 271 KB.
    expect(bytes(Array.from({ length: 4_000 }, (_, n) => range(n)))).toBeGreaterThan(PAYLOAD_LIMIT);
  });

  it('every request each function makes is allowed by its synthesized role (recorded, judged by the IAM evaluator)', async () => {
    const services = testServices();
    const [s3, dynamo] = await Promise.all([
      AwsRequestRecorder.start('s3', services.s3Endpoint),
      AwsRequestRecorder.start('dynamodb', services.dynamoEndpoint),
    ]);
    const { resources } = synthesized;
    const idOf = (type: string, pattern: RegExp) =>
      Object.entries(resources).find(([id, resource]) => resource.Type === type && pattern.test(id))![0];
    const names: TemplateNames = {
      region: 'us-east-1',
      account: '123456789012',
      tables: { [idOf('AWS::DynamoDB::Table', /./)]: harness.table },
      buckets: { [idOf('AWS::S3::Bucket', /Snapshots/)]: harness.bucket },
    };
    const face = (name: string) => {
      const properties = resources[idOf('AWS::Lambda::Function', new RegExp(`ViewRebuild${name}`))]!.Properties;
      const deployed = Object.entries(properties.Environment.Variables as Record<string, unknown>);
      return {
        statements: roleStatements(resources, properties.Role['Fn::GetAtt'][0] as string),
        env: {
          ...Object.fromEntries(deployed.map(([key, value]) => [key, resolve(value, names)])),
          AWS_ENDPOINT_URL_S3: s3.url,
          AWS_ENDPOINT_URL_DYNAMODB: dynamo.url,
        },
      };
    };
    const faces = { Planner: face('Planner'), Worker: face('Worker'), Finalizer: face('Finalizer') };
    const calls: Record<keyof typeof faces, RecordedCall[]> = { Planner: [], Worker: [], Finalizer: [] };
    const before = { ...process.env };
    /** Runs a handler with its function's deployed environment, reaching the servers through the recorders. */
    const as = async (name: keyof typeof faces, run: () => Promise<Json>): Promise<Json> => {
      s3.take();
      dynamo.take();
      Object.assign(process.env, faces[name].env);
      try {
        return await run();
      } finally {
        Object.assign(process.env, before);
        calls[name].push(...s3.take(), ...dynamo.take());
      }
    };
    // Into an empty view: the worker reads indexes that are not there (404) and writes every one.
    for (const key of await keys('packages/')) await harness.snapshots.deleteKey(key);
    try {
      const execution = (n: number) => `arn:aws:states:us-east-1:123456789012:execution:ViewRebuild:grants-${n}`;
      const first = await as('Planner', () => handlers.planner({ input: INPUT, execution: execution(1) }, ENOUGH));
      // Abandoned (its items files deleted), then planned anew.
      const plan = await as('Planner', () =>
        handlers.planner({ input: { ...INPUT, abandon: true }, execution: execution(2) }, ENOUGH),
      );
      expect(plan.rebuildId).not.toBe(first.rebuildId);
      for (const [phase, key, size] of [
        ['records', plan.rangesKey, 1],
        ['indexes', plan.shardsKey, 2],
      ] as const) {
        // The ItemReader's read is the state machine's role's, not a function's.
        const items = JSON.parse(String(await harness.snapshots.getBytes(key))) as Json[];
        for (let i = 0; i < items.length; i += size) {
          const BatchInput = { rebuildId: plan.rebuildId, phase, leaseHolder: execution(2), passes: 0 };
          const outcome = await as('Worker', () =>
            handlers.worker({ Items: items.slice(i, i + size), BatchInput }, ENOUGH),
          );
          expect(outcome.done).toBe(true);
        }
      }
      await as('Finalizer', () => handlers.finalizer({ rebuildId: plan.rebuildId, release: true }, ENOUGH));
      expect(await as('Finalizer', () => handlers.finalizer({ rebuildId: plan.rebuildId }, ENOUGH))).toMatchObject({
        rebuildId: plan.rebuildId,
      });
    } finally {
      Object.assign(process.env, before);
      await Promise.all([s3.stop(), dynamo.stop()]);
    }
    const did = (name: keyof typeof faces, method: string, under: string) =>
      calls[name].some((call) => call.service === 's3' && call.method === method && call.key?.startsWith(under));
    expect([
      did('Planner', 'DELETE', 'view-rebuild/'),
      did('Worker', 'PUT', 'packages/'),
      did('Finalizer', 'DELETE', 'view-rebuild/'),
    ]).toEqual([true, true, true]);
    expect({
      planner: uncovered(faces.Planner.statements, calls.Planner, names),
      worker: uncovered(faces.Worker.statements, calls.Worker, names),
      finalizer: uncovered(faces.Finalizer.statements, calls.Finalizer, names),
    }).toEqual({ planner: [], worker: [], finalizer: [] });
  });
});
