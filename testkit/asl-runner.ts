/**
 * A small interpreter of the Amazon States Language, for the subset the backfill's synthesized definition uses, so
 * that tests run the real definition (its Payload templates, ResultSelector, ResultPath, OutputPath, Choice, the
 * Pass state's `States.MathAdd`, Retry and Catch, the Distributed Map's ItemReader, ItemBatcher, MaxConcurrency and
 * ResultWriter) with the real handlers, instead of a copy of its glue. No interpreter in the registry here runs on
 * Node 20: aws-local-stepfunctions has 3.0.0 only, which needs Node 22 (its older versions are not in the registry).
 *
 * It follows the AWS Step Functions developer guide ("Input and output processing", "Intrinsic functions",
 * "Distributed Map state", "Error handling") for what it supports, checks Step Functions' 256 KiB limit on every
 * state's input and output (`States.DataLimitExceeded`), and refuses anything else it meets with an error naming
 * it, so a definition that grows a new feature fails here loudly rather than being half run. Retries do not wait:
 * each wait a retrier would make is recorded instead.
 */

/** Step Functions' limit on a state's input or output, and on an execution's input (bytes, UTF-8). */
export const PAYLOAD_LIMIT = 256 * 1024;

type Json = any;

/** What the interpreted tasks call. */
export interface AslWorld {
  /** A Lambda function's invocation: its response, or a thrown error whose `name` is the Step Functions error. */
  invoke(functionArn: string, payload: Json): Promise<Json>;
  /** The ItemReader's `s3:getObject`. */
  getObject(bucket: string, key: string): Promise<string>;
  /** The ResultWriter's writes: the map run's results. */
  putObject(bucket: string, key: string, body: string): Promise<void>;
}

/** What happened during a run, for the test to check. */
export interface AslTrace {
  readonly states: string[];
  /** Every retry: the state, the error, the attempt (1-based) and the wait the retrier would make, in seconds, before jitter. */
  readonly retries: { state: string; error: string; attempt: number; waitSeconds: number }[];
  /** Every child execution of a Distributed Map: its input and output sizes in bytes, and its output. */
  readonly children: { inputBytes: number; outputBytes: number; output: Json }[];
  /**
   * A failed map's children still running when it failed (their tasks run on, as Lambda invocations do; they start no
   * further state): settled when every one has ended. A test awaits it to see what they did after the map failed.
   */
  inFlight?: Promise<void>;
}

/** A failed execution (or child execution): Step Functions' error name and cause. */
export class AslFailure extends Error {
  constructor(
    readonly error: string,
    readonly cause_: string,
  ) {
    super(`${error}: ${cause_}`);
  }
}

const bytes = (value: Json): number => Buffer.byteLength(JSON.stringify(value ?? null));

function limit(what: string, value: Json): void {
  const size = bytes(value);
  if (size > PAYLOAD_LIMIT)
    throw new AslFailure('States.DataLimitExceeded', `${what} is ${size} bytes, over ${PAYLOAD_LIMIT}`);
}

let executions = 0;

/**
 * Runs `definition` on `input`; resolves to the execution's output, or rejects with an {@link AslFailure}. The
 * context object (`$$`) holds `Execution.Id`: `executionId`, or a new ARN for each run.
 */
export async function runDefinition(
  definition: Json,
  input: Json,
  world: AslWorld,
  trace: AslTrace = { states: [], retries: [], children: [] },
  executionId = `arn:aws:states:us-east-1:123456789012:execution:Backfill:run-${++executions}`,
): Promise<Json> {
  limit('the execution input', input);
  return runStates(definition, input, world, trace, { Execution: { Id: executionId } });
}

/** The context object, `$$`; `stopped` (not part of it) tells a child execution that its map run failed. */
type Context = { readonly Execution: { readonly Id: string }; readonly stopped?: () => boolean };

async function runStates(machine: Json, input: Json, world: AslWorld, trace: AslTrace, ctx: Context): Promise<Json> {
  let name: string = machine.StartAt;
  let data = input;
  for (;;) {
    // A child of a map run that failed is stopped by Step Functions: it starts no further state.
    if (ctx.stopped?.()) throw new AslFailure('States.Aborted', `${ctx.Execution.Id} was stopped: its map run failed`);
    const state = machine.States[name];
    if (state === undefined) throw new Error(`no state ${name}`);
    trace.states.push(name);
    limit(`the input of ${name}`, data);
    let next: string | undefined;
    let caught = false;
    try {
      data = await runState(name, state, data, world, trace, ctx);
      next = state.Next;
    } catch (error) {
      if (!(error instanceof AslFailure) || state.Type === 'Fail') throw error;
      const handler = (state.Catch ?? []).find((c: Json) => matches(c.ErrorEquals, error.error));
      if (handler === undefined) throw error;
      data = applyResultPath(data, { Error: error.error, Cause: error.cause_ }, handler.ResultPath);
      next = handler.Next;
      caught = true;
    }
    limit(`the output of ${name}`, data);
    // A caught error goes to its Catch's Next, even from a state that would end the execution.
    if (!caught && (state.Type === 'Succeed' || state.End === true)) return data;
    if (state.Type === 'Choice') next = choose(state, data);
    if (next === undefined) throw new Error(`state ${name} has no Next`);
    name = next;
  }
}

async function runState(
  name: string,
  state: Json,
  input: Json,
  world: AslWorld,
  trace: AslTrace,
  ctx: Context,
): Promise<Json> {
  const known = new Set([
    'Type',
    'Comment',
    'Next',
    'End',
    'Parameters',
    'ResultSelector',
    'ResultPath',
    'OutputPath',
    'InputPath',
    'Retry',
    'Catch',
    'Resource',
  ]);
  const mapKeys = new Set([
    'ItemReader',
    'ItemBatcher',
    'ItemProcessor',
    'MaxConcurrency',
    'ToleratedFailurePercentage',
    'ResultWriter',
    'Label',
  ]);
  const choiceKeys = new Set(['Choices', 'Default']);
  const failKeys = new Set(['Error', 'Cause', 'ErrorPath', 'CausePath']);
  for (const key of Object.keys(state)) {
    if (!known.has(key) && !mapKeys.has(key) && !choiceKeys.has(key) && !failKeys.has(key))
      throw new Error(`state ${name}: field ${key} is not supported here`);
  }
  const effective = state.InputPath === undefined ? input : select(input, state.InputPath);
  switch (state.Type) {
    case 'Pass':
      return output(
        state,
        input,
        state.Parameters === undefined ? effective : template(state.Parameters, effective, ctx),
        ctx,
      );
    case 'Succeed':
      return state.OutputPath === undefined ? effective : select(effective, state.OutputPath);
    case 'Choice':
      return effective;
    case 'Fail':
      throw new AslFailure(
        state.ErrorPath ? select(input, state.ErrorPath) : state.Error,
        state.CausePath ? select(input, state.CausePath) : state.Cause,
      );
    case 'Task':
      return output(state, input, await withRetry(name, state, trace, () => task(state, effective, world, ctx)), ctx);
    case 'Map':
      return output(state, input, await distributedMap(name, state, effective, world, trace, ctx), ctx);
    default:
      throw new Error(`state ${name}: type ${state.Type} is not supported here`);
  }
}

/** ResultSelector, ResultPath, OutputPath applied to a state's result. */
function output(state: Json, input: Json, result: Json, ctx: Context): Json {
  const selected = state.ResultSelector === undefined ? result : template(state.ResultSelector, result, ctx);
  const placed = applyResultPath(input, selected, state.ResultPath);
  return state.OutputPath === undefined ? placed : select(placed, state.OutputPath);
}

async function task(state: Json, input: Json, world: AslWorld, ctx: Context): Promise<Json> {
  const parameters = state.Parameters === undefined ? undefined : template(state.Parameters, input, ctx);
  if (state.Resource === 'arn:aws:states:::lambda:invoke') {
    const payload = parameters.Payload ?? input;
    limit('a Lambda payload', payload);
    const response = await world.invoke(parameters.FunctionName, payload);
    return { ExecutedVersion: '$LATEST', Payload: response, StatusCode: 200 };
  }
  if (/^arn:aws:lambda:/.test(state.Resource)) return world.invoke(state.Resource, parameters ?? input);
  throw new Error(`task resource ${state.Resource} is not supported here`);
}

async function withRetry(name: string, state: Json, trace: AslTrace, attempt: () => Promise<Json>): Promise<Json> {
  const counts = new Map<Json, number>();
  for (;;) {
    try {
      return await attempt();
    } catch (thrown) {
      const error =
        thrown instanceof AslFailure
          ? thrown
          : new AslFailure((thrown as Error)?.name ?? 'Error', (thrown as Error)?.message ?? String(thrown));
      const retrier = (state.Retry ?? []).find((r: Json) => matches(r.ErrorEquals, error.error));
      const used = counts.get(retrier) ?? 0;
      if (retrier === undefined || used >= (retrier.MaxAttempts ?? 3)) throw error;
      counts.set(retrier, used + 1);
      const wait = (retrier.IntervalSeconds ?? 1) * (retrier.BackoffRate ?? 2) ** used;
      trace.retries.push({
        state: name,
        error: error.error,
        attempt: used + 1,
        waitSeconds: Math.min(wait, retrier.MaxDelaySeconds ?? Infinity),
      });
    }
  }
}

function matches(errorEquals: string[], error: string): boolean {
  return (
    errorEquals.includes(error) ||
    (errorEquals.includes('States.ALL') && !['States.Runtime', 'States.DataLimitExceeded'].includes(error))
  );
}

async function distributedMap(
  name: string,
  state: Json,
  input: Json,
  world: AslWorld,
  trace: AslTrace,
  ctx: Context,
): Promise<Json> {
  const processor = state.ItemProcessor;
  if (processor?.ProcessorConfig?.Mode !== 'DISTRIBUTED')
    throw new Error(`map ${name}: only a Distributed Map is supported here`);
  const reader = state.ItemReader;
  if (reader?.Resource !== 'arn:aws:states:::s3:getObject' || reader.ReaderConfig?.InputType !== 'JSON')
    throw new Error(`map ${name}: only a JSON ItemReader is supported here`);
  const { Bucket, Key } = template(reader.Parameters, input, ctx);
  const items = JSON.parse(await world.getObject(Bucket, Key)) as Json[];
  if (!Array.isArray(items)) throw new AslFailure('States.ItemReaderFailed', `${Key} is not a JSON array`);
  const batches = batch(name, state.ItemBatcher, items, input, ctx);
  const outputs: Json[] = new Array(batches.length);
  // ToleratedFailurePercentage 0 (the only tolerance supported here): one failed child fails the map.
  if ((state.ToleratedFailurePercentage ?? 0) !== 0)
    throw new Error(`map ${name}: only ToleratedFailurePercentage 0 is supported here`);
  let failed: AslFailure | undefined;
  let onFailure!: () => void;
  const failure = new Promise<void>((resolve) => (onFailure = resolve));
  let nextBatch = 0;
  const childContext = (i: number): Context => ({
    Execution: { Id: `${ctx.Execution.Id}/batch-${i}` },
    stopped: () => failed !== undefined,
  });
  const lane = async (): Promise<void> => {
    while (failed === undefined && nextBatch < batches.length) {
      const i = nextBatch++;
      const childInput = batches[i];
      try {
        const childOutput = await runStates(processor, childInput, world, trace, childContext(i));
        trace.children.push({ inputBytes: bytes(childInput), outputBytes: bytes(childOutput), output: childOutput });
        outputs[i] = childOutput;
      } catch (error) {
        if (!(error instanceof AslFailure)) throw error;
        if (failed === undefined) {
          failed = error;
          onFailure();
        }
      }
    }
  };
  const lanes = Promise.all(
    Array.from({ length: Math.max(1, Math.min(state.MaxConcurrency ?? 1, batches.length)) }, lane),
  );
  // The first failed child fails the map run at once, as on AWS: the others are stopped, though a task of theirs
  // already started (a Lambda invocation) runs on to its end, after the map and the execution have moved on.
  await Promise.race([lanes, failure]);
  if (failed !== undefined) {
    trace.inFlight = lanes.then(() => undefined);
    throw new AslFailure('States.ExceedToleratedFailureThreshold', `a child execution failed: ${failed.message}`);
  }
  if (state.ResultWriter === undefined) return outputs;
  const writer = state.ResultWriter;
  if (writer.Resource !== 'arn:aws:states:::s3:putObject')
    throw new Error(`map ${name}: ResultWriter ${writer.Resource} is not supported here`);
  const target = template(writer.Parameters, input, ctx);
  const prefix = `${target.Prefix}${target.Prefix.endsWith('/') ? '' : '/'}map-run-1/`;
  await world.putObject(
    target.Bucket,
    `${prefix}SUCCEEDED_0.json`,
    JSON.stringify(outputs.map((Output) => ({ Output: JSON.stringify(Output), Status: 'SUCCEEDED' }))),
  );
  await world.putObject(
    target.Bucket,
    `${prefix}manifest.json`,
    JSON.stringify({
      DestinationBucket: target.Bucket,
      MapRunArn: 'map-run-1',
      ResultFiles: { SUCCEEDED: [{ Key: `${prefix}SUCCEEDED_0.json` }] },
    }),
  );
  return { MapRunArn: 'map-run-1', ResultWriterDetails: { Bucket: target.Bucket, Key: `${prefix}manifest.json` } };
}

/** The ItemBatcher: MaxItemsPerBatch items a batch, fewer when MaxInputBytesPerBatch would be passed. */
function batch(name: string, batcher: Json, items: Json[], input: Json, ctx: Context): Json[] {
  if (batcher === undefined) throw new Error(`map ${name}: only a map with an ItemBatcher is supported here`);
  const batchInput = batcher.BatchInput === undefined ? undefined : template(batcher.BatchInput, input, ctx);
  const maxItems = batcher.MaxItemsPerBatch ?? Infinity;
  const maxBytes = batcher.MaxInputBytesPerBatch ?? PAYLOAD_LIMIT;
  const batches: Json[] = [];
  let current: Json[] = [];
  const wrap = (batchItems: Json[]) => ({
    Items: batchItems,
    ...(batchInput === undefined ? {} : { BatchInput: batchInput }),
  });
  for (const item of items) {
    if (bytes(wrap([item])) > maxBytes)
      throw new AslFailure(
        'States.ItemReaderFailed',
        `an item of ${bytes(item)} bytes does not fit MaxInputBytesPerBatch ${maxBytes}`,
      );
    if (current.length >= maxItems || bytes(wrap([...current, item])) > maxBytes) {
      batches.push(wrap(current));
      current = [];
    }
    current.push(item);
  }
  if (current.length > 0) batches.push(wrap(current));
  return batches;
}

function choose(state: Json, data: Json): string {
  for (const rule of state.Choices) {
    const value = select(data, rule.Variable);
    if ('BooleanEquals' in rule && value === rule.BooleanEquals) return rule.Next;
    else if ('NumericGreaterThanEquals' in rule && typeof value === 'number' && value >= rule.NumericGreaterThanEquals)
      return rule.Next;
    else if (!('BooleanEquals' in rule) && !('NumericGreaterThanEquals' in rule))
      throw new Error(`choice rule ${JSON.stringify(rule)} is not supported here`);
  }
  if (state.Default === undefined) throw new AslFailure('States.NoChoiceMatched', JSON.stringify(data));
  return state.Default;
}

/**
 * A payload template: `"key.$"` fields are paths on `data` (`$$.` paths on the context object) or intrinsic
 * functions; the others copied.
 */
function template(shape: Json, data: Json, ctx: Context): Json {
  if (Array.isArray(shape)) return shape.map((value) => template(value, data, ctx));
  if (shape === null || typeof shape !== 'object') return shape;
  const out: Json = {};
  for (const [key, value] of Object.entries(shape)) {
    if (key.endsWith('.$')) out[key.slice(0, -2)] = evaluate(value as string, data, ctx);
    else out[key] = template(value, data, ctx);
  }
  return out;
}

function evaluate(expression: string, data: Json, ctx: Context): Json {
  const add = /^States\.MathAdd\((\$[^,]*),\s*(-?\d+)\)$/.exec(expression);
  if (add) return Number(select(data, add[1]!)) + Number(add[2]);
  if (expression.startsWith('States.')) throw new Error(`intrinsic ${expression} is not supported here`);
  if (expression.startsWith('$$.')) return select(ctx, expression.slice(1));
  return select(data, expression);
}

/** A reference path: `$`, `$.a.b` (plain names only). A missing field is Step Functions' States.Runtime error. */
function select(data: Json, path: string): Json {
  if (path === '$') return data;
  if (!/^\$(\.[A-Za-z_][A-Za-z0-9_]*)+$/.test(path)) throw new Error(`path ${path} is not supported here`);
  let value = data;
  for (const part of path.slice(2).split('.')) {
    if (value === null || typeof value !== 'object' || !(part in value))
      throw new AslFailure(
        'States.Runtime',
        `the path ${path} matches nothing in ${JSON.stringify(data).slice(0, 200)}`,
      );
    value = value[part];
  }
  return value;
}

function applyResultPath(input: Json, result: Json, resultPath: string | null | undefined): Json {
  if (resultPath === null) return input;
  if (resultPath === undefined || resultPath === '$') return result;
  if (!/^\$(\.[A-Za-z_][A-Za-z0-9_]*)+$/.test(resultPath))
    throw new Error(`ResultPath ${resultPath} is not supported here`);
  const copy = structuredClone(input ?? {});
  const parts = resultPath.slice(2).split('.');
  let at = copy;
  for (const part of parts.slice(0, -1)) at = at[part] ??= {};
  at[parts.at(-1)!] = result;
  return copy;
}
