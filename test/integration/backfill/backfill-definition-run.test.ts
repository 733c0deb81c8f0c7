/**
 * The synthesized backfill state machine (the app with `-c catalog-sync:backfill=true`) run as it is, by a small
 * ASL interpreter (testkit/asl-runner.ts), with the real planner, worker and finalizer handlers against the catalog
 * replica, DynamoDB Local (or dynalite) and s3rver: the batches the definition's ItemBatcher forms (its batch size,
 * its BatchInput, its byte limit), the Payload templates and ResultSelector applied to the handlers' real results,
 * the Choice and MathAdd loop, the retriers (a throttle), the Catch that gives the lease back, the ResultWriter;
 * and the 256 KiB limit on every state checked as it runs.
 */
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatTimestamp } from '../../../lambda/contract/time.js';
import { AslFailure, PAYLOAD_LIMIT, runDefinition, type AslTrace, type AslWorld } from '../../../testkit/asl-runner.js';
import { generateCatalog, type GeneratedCatalog } from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { commitTicks, SyncHarness } from '../../../testkit/sync-harness.js';
import { definitionOf, synth, type Json } from '../../infra/synth-kit.js';

const ENOUGH = { getRemainingTimeInMillis: () => 600_000 };
const NO_TIME = { getRemainingTimeInMillis: () => 5_000 }; // the safety margin takes all of it

type Handler = (payload: Json, context: typeof ENOUGH) => Promise<Json>;

describe('the synthesized backfill definition, run with the real handlers', () => {
  let catalog: GeneratedCatalog;
  let replica: CatalogReplica;
  let harness: SyncHarness;
  let definition: Json;
  const saved = { ...process.env };
  let handlers: { planner: Handler; worker: Handler; finalizer: Handler };

  beforeAll(async () => {
    // About 180 leaves: with ranges of 20 leaves, more than twice the ItemBatcher's 4 ranges a batch.
    catalog = generateCatalog({
      commits: 60,
      seed: 2121,
      leavesPerCommit: [1, 5],
      sameMillisecondPairs: 3,
      deleteRatio: 0.1,
    });
    replica = await CatalogReplica.start({ catalog, pageSize: 20, splitCommits: true });
    harness = await SyncHarness.create();
    // The template's CloudFormation validation is test/infra/backfill.test.ts's: here only the definition runs.
    definition = definitionOf(synth({ 'catalog-sync:backfill': true }, { validate: false }), harness.bucket);
    handlers = {
      planner: (await import('../../../lambda/backfill/lambda/planner.js')).handler as unknown as Handler,
      worker: (await import('../../../lambda/backfill/lambda/worker.js')).handler as unknown as Handler,
      finalizer: (await import('../../../lambda/backfill/lambda/finalizer.js')).handler as unknown as Handler,
    };
  });
  afterAll(async () => {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
    await replica.stop();
  });

  /** The cursor `cursor`'s env, and a world whose Lambdas are the handlers (`worker` may be wrapped). */
  function world(
    cursor: string,
    wrapWorker: (call: (context?: typeof ENOUGH) => Promise<Json>, invocation: number) => Promise<Json> = (call) =>
      call(),
  ): AslWorld {
    Object.assign(
      process.env,
      harness.env({ CATALOG_SOURCE: replica.serviceIndexUrl, CURSOR_NAME: cursor, CONCURRENCY: '8' }),
    );
    let workerCalls = 0;
    return {
      async invoke(arn, payload) {
        // As Lambda: JSON in, JSON out.
        const input = JSON.parse(JSON.stringify(payload));
        const out = async (result: Promise<Json>) => JSON.parse(JSON.stringify(await result));
        if (/BackfillPlanner/.test(arn)) return out(handlers.planner(input, ENOUGH));
        if (/BackfillFinalizer/.test(arn)) return out(handlers.finalizer(input, ENOUGH));
        if (/BackfillWorker/.test(arn)) {
          const n = ++workerCalls;
          return out(wrapWorker((context = ENOUGH) => handlers.worker(input, context), n));
        }
        throw new Error(`no function ${arn}`);
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

  it('Plan → Ranges (batches as the ItemBatcher forms them, a throttle retried, a batch looped) → Finish: the cursor on B', async () => {
    const trace: AslTrace = { states: [], retries: [], children: [] };
    const throttle = Object.assign(new Error('Rate Exceeded.'), { name: 'Lambda.TooManyRequestsException' });
    const w = world('run', (call, n) => {
      if (n <= 2) return Promise.reject(throttle);
      // The first batch to run gets no time: it comes back not done and the definition loops it (Again).
      return call(n === 3 ? NO_TIME : ENOUGH);
    });

    const summary = await runDefinition(definition, { rangeLeaves: 20 }, w, trace);

    const head = commitTicks(catalog, -1);
    const leaves = catalog.commits.reduce((n, commit) => n + commit.leaves.length, 0);
    expect(summary).toMatchObject({
      cursorName: 'run',
      cursorAfter: formatTimestamp(head),
      commits: catalog.commits.length,
      leaves,
      caughtUp: true,
    });
    expect(await harness.cursor('run')).toBe(formatTimestamp(head));
    expect(await harness.verify(catalog, replica.origin, head)).toEqual([]);

    // The definition's own batching: MaxItemsPerBatch ranges a batch, each child ending with {"done": true} only.
    const map = definition.States.Ranges;
    const rangeCount = JSON.parse(await w.getObject(harness.bucket, `backfill/${summary.runId}/ranges.json`)).length;
    expect(rangeCount).toBeGreaterThan(2 * map.ItemBatcher.MaxItemsPerBatch);
    expect(trace.children).toHaveLength(Math.ceil(rangeCount / map.ItemBatcher.MaxItemsPerBatch));
    for (const child of trace.children) {
      expect(child.output).toEqual({ done: true });
      expect(child.inputBytes).toBeLessThanOrEqual(map.ItemBatcher.MaxInputBytesPerBatch);
    }
    // The throttles (the first invocations of two batches started at once) went to the throttle retrier, and the
    // not-done batch round the loop once.
    expect(trace.retries).toEqual([
      {
        state: 'RunBatch',
        error: 'Lambda.TooManyRequestsException',
        attempt: 1,
        waitSeconds: definition.States.Ranges.ItemProcessor.States.RunBatch.Retry[0].IntervalSeconds,
      },
      {
        state: 'RunBatch',
        error: 'Lambda.TooManyRequestsException',
        attempt: 1,
        waitSeconds: definition.States.Ranges.ItemProcessor.States.RunBatch.Retry[0].IntervalSeconds,
      },
    ]);
    expect(trace.states.filter((name) => name === 'Again')).toHaveLength(1);
    // The ResultWriter wrote the children's results under the results prefix.
    const manifest = JSON.parse(await w.getObject(harness.bucket, 'backfill/map-runs/map-run-1/manifest.json'));
    expect(manifest.ResultFiles.SUCCEEDED).toHaveLength(1);
  });

  it("the map's children at nuget.org's scale (2,300 ranges, 575 batches) would fit 256 KiB even without the ResultWriter", async () => {
    // What each child returns is fixed by the definition (BatchDone's OutputPath): measured on the run above's shape.
    const childOutput = { done: true };
    const batches = Math.ceil(2_300 / definition.States.Ranges.ItemBatcher.MaxItemsPerBatch);
    expect(Buffer.byteLength(JSON.stringify(Array(batches).fill(childOutput)))).toBeLessThan(PAYLOAD_LIMIT / 20);
  });

  it('a map that fails gives the lease back and fails with its error; the next execution resumes the plan at once', async () => {
    const failing = world('fails', () =>
      Promise.reject(Object.assign(new Error('range 0 failed at https://x'), { name: 'BackfillRangeError' })),
    );
    const trace: AslTrace = { states: [], retries: [], children: [] };
    const error = await runDefinition(definition, { rangeLeaves: 20 }, failing, trace).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AslFailure);
    expect(error).toMatchObject({ error: 'States.ExceedToleratedFailureThreshold' });
    expect(trace.states.slice(-2)).toEqual(['Release', 'Failed']);
    // The worker's error retried by the States.ALL retrier (3 times) before the child failed.
    expect(trace.retries.filter((r) => r.error === 'BackfillRangeError').length).toBeGreaterThanOrEqual(3);
    const plan = (await harness.store.newestPlan('fails'))!;
    expect(plan.status).toBe('running');
    expect(plan.leaseUntil).toBeLessThanOrEqual(Date.now());

    const summary = await runDefinition(definition, {}, world('fails'));
    expect(summary).toMatchObject({ runId: plan.backfillId, cursorAfter: formatTimestamp(commitTicks(catalog, -1)) });
  });

  it('a Plan retried after the planner succeeded (a Lambda service error on the way back) takes up its own plan', async () => {
    const w = world('retried');
    const invoke = w.invoke.bind(w);
    let lost = 0;
    w.invoke = async (arn, payload) => {
      const result = await invoke(arn, payload);
      if (/BackfillPlanner/.test(arn) && lost++ === 0)
        throw Object.assign(new Error('the answer was lost'), { name: 'Lambda.ServiceException' });
      return result;
    };
    const trace: AslTrace = { states: [], retries: [], children: [] };
    const executionId = 'arn:aws:states:us-east-1:123456789012:execution:Backfill:retried-plan';
    const summary = await runDefinition(definition, { rangeLeaves: 20 }, w, trace, executionId);
    expect(trace.retries).toContainEqual(
      expect.objectContaining({ state: 'Plan', error: 'Lambda.ServiceException', attempt: 1 }),
    );
    // One plan, held by this execution, finished.
    const plan = (await harness.store.newestPlan('retried'))!;
    expect(plan).toMatchObject({ backfillId: summary.runId, status: 'finished', leaseHolder: executionId });
  });

  it('a plan resumed under another SNAPSHOT_PREFIX hands the map its ranges file where the plan wrote it', async () => {
    const w = world('moved');
    Object.assign(process.env, { SNAPSHOT_PREFIX: 'before/' });
    const planner = handlers.planner as unknown as (event: Json) => Promise<Json>;
    const execution = 'arn:aws:states:us-east-1:123456789012:execution:Backfill:moved';
    const first = await planner({ input: { rangeLeaves: 20 }, execution });
    expect(first.rangesKey).toBe(`before/backfill/${first.backfillId}/ranges.json`);
    delete process.env.SNAPSHOT_PREFIX;
    const resumed = await planner({ input: {}, execution });
    expect(resumed).toMatchObject({
      backfillId: first.backfillId,
      resumed: true,
      rangesKey: first.rangesKey,
      leaseHolder: execution,
    });
    expect(JSON.parse(await w.getObject(resumed.bucket, resumed.rangesKey))).toHaveLength(first.ranges);
  });

  it('a Finish that keeps failing is retried, then gives the lease back and fails with its error; the next execution finishes at once', async () => {
    const w = world('finish-fails');
    const invoke = w.invoke.bind(w);
    let finishes = 0;
    w.invoke = async (arn, payload) => {
      // The finalizer times out on every attempt (Lambda's error for it), after every range was stored.
      if (/BackfillFinalizer/.test(arn) && payload.release !== true) {
        finishes++;
        throw Object.assign(new Error('Task timed out after 300.00 seconds'), { name: 'Sandbox.Timedout' });
      }
      return invoke(arn, payload);
    };
    const trace: AslTrace = { states: [], retries: [], children: [] };
    const error = await runDefinition(definition, { rangeLeaves: 20 }, w, trace).catch((e: unknown) => e);
    expect(error).toMatchObject({ error: 'Sandbox.Timedout' });
    // Retried (any error, with backoff), then Release, then Failed with Finish's error.
    const retries = trace.retries.filter((r) => r.state === 'Finish');
    expect(retries.map((r) => r.waitSeconds)).toEqual([10, 20, 40]);
    expect(finishes).toBe(4);
    expect(trace.states.slice(-3)).toEqual(['Finish', 'Release', 'Failed']);
    // The cursor did not move; the lease is given back at once (not held by a dead execution for 10 minutes).
    expect(await harness.cursor('finish-fails')).toBeUndefined();
    const plan = (await harness.store.newestPlan('finish-fails'))!;
    expect(plan).toMatchObject({ status: 'running' });
    expect(plan.leaseUntil).toBeLessThanOrEqual(Date.now());
    expect(plan.leaseHolder).toBeUndefined();

    // An immediate rerun resumes the plan (every range done) and finishes it.
    const again: AslTrace = { states: [], retries: [], children: [] };
    const summary = await runDefinition(definition, {}, world('finish-fails'), again);
    expect(summary).toMatchObject({ runId: plan.backfillId, cursorAfter: formatTimestamp(commitTicks(catalog, -1)) });
    expect(again.states).toContain('Finish');
  });

  it('a lease given back after a failed map is not renewed by its workers still running; the next execution is not refused', async () => {
    const w = world('released');
    const invoke = w.invoke.bind(w);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let held = 0;
    w.invoke = async (arn, payload) => {
      if (/BackfillWorker/.test(arn)) {
        // Range 0's batch fails on every attempt; the other batches' workers are still running when the map fails.
        if (payload.Items.some((range: { n: number }) => range.n === 0))
          throw Object.assign(new Error('range 0 failed'), { name: 'CS_ERR_BACKFILL_RANGE' });
        held++;
        await gate;
      }
      return invoke(arn, payload);
    };
    const trace: AslTrace = { states: [], retries: [], children: [] };
    const error = await runDefinition(definition, { rangeLeaves: 20 }, w, trace).catch((e: unknown) => e);
    expect(error).toMatchObject({ error: 'States.ExceedToleratedFailureThreshold' });
    expect(trace.states.slice(-2)).toEqual(['Release', 'Failed']);
    expect(held).toBeGreaterThan(0);
    const released = (await harness.store.newestPlan('released'))!;
    expect(released.leaseUntil).toBeLessThanOrEqual(Date.now());

    // The workers of the failed execution run on (as Lambda invocations do) and store their ranges, renewing nothing.
    open();
    await trace.inFlight;
    const after = (await harness.store.newestPlan('released'))!;
    expect(after.leaseUntil).toBe(released.leaseUntil);
    expect(
      (await harness.store.listRanges('released', after.backfillId)).filter((range) => range.done).length,
    ).toBeGreaterThan(0);
    // So a new execution takes the plan up at once, and finishes it.
    const summary = await runDefinition(definition, {}, world('released'));
    expect(summary).toMatchObject({ runId: after.backfillId, cursorAfter: formatTimestamp(commitTicks(catalog, -1)) });
  });

  it('two executions started at once make one plan; the other ends in AlreadyRunning (not failed) naming the holder and until when', async () => {
    // The first planner is held after it claimed the cursor, before its plan is written (reading the catalog index).
    const hold = replica.hold(() => true);
    const firstId = 'arn:aws:states:us-east-1:123456789012:execution:Backfill:first-of-two';
    const first = runDefinition(definition, { rangeLeaves: 20 }, world('double'), undefined, firstId);
    await hold.arrived;
    const trace: AslTrace = { states: [], retries: [], children: [] };
    const started = Date.now();
    const second = await runDefinition(definition, { rangeLeaves: 20 }, world('double'), trace);
    hold.release();
    expect(trace.states).toEqual(['Plan', 'AlreadyRunning']);
    expect(second).toMatchObject({ Error: 'CS_ERR_BACKFILL_RUNNING' });
    const until = /claim lasts until (\S+) unless its plan is written/.exec(second.Cause)?.[1];
    expect(second.Cause).toContain(`of cursor double is being planned (held by ${firstId})`);
    expect(Date.parse(until!)).toBeGreaterThan(started);
    const summary = await first;
    expect((await harness.store.newestPlan('double'))!).toMatchObject({
      backfillId: summary.runId,
      status: 'finished',
      leaseHolder: firstId,
    });
  });

  it('a second execution while the first runs ends at Plan in AlreadyRunning naming the running plan; another rangeLeaves is refused naming both', async () => {
    let open!: () => void;
    let reached!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const working = new Promise<void>((resolve) => (reached = resolve));
    const first = runDefinition(
      definition,
      { rangeLeaves: 20 },
      world('twice', async (call) => {
        reached();
        await gate;
        return call();
      }),
    );
    // The first is planned once its first worker waits at the gate.
    await working;
    const plan = (await harness.store.newestPlan('twice'))!;
    const trace: AslTrace = { states: [], retries: [], children: [] };
    // Not a failure (the alarm counts failed executions): it ends in a Succeed state with the refusal as its output.
    const second = await runDefinition(definition, {}, world('twice'), trace);
    expect(second).toMatchObject({ Error: 'CS_ERR_BACKFILL_RUNNING' });
    // Named: the plan, the execution that holds it, and until when.
    expect(second.Cause).toContain(
      `backfill ${plan.backfillId} of cursor twice is running (held by ${plan.leaseHolder}); its lease lasts until ${new Date(plan.leaseUntil).toISOString()}`,
    );
    expect(trace.states).toEqual(['Plan', 'AlreadyRunning']);
    const other = await runDefinition(definition, { rangeLeaves: 21 }, world('twice')).catch((e: unknown) => e);
    expect(other).toMatchObject({ error: 'CS_ERR_BACKFILL_MISMATCH' });
    expect(String((other as AslFailure).cause_)).toContain('rangeLeaves 20, but rangeLeaves 21 was asked');
    open();
    expect(await first).toMatchObject({ runId: plan.backfillId });
  });
});
