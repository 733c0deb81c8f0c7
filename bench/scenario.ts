/**
 * One benchmark scenario, in a process of its own so that its peak RSS (`process.resourceUsage().maxRSS`)
 * and CPU time (`process.cpuUsage()`) are its own. Started by run.ts with `fork`, the {@link ScenarioConfig} as
 * JSON in argv[2]; sends one {@link ScenarioResult} over IPC and exits.
 *
 * Kinds:
 * - `engine`: `runSlice` exactly as the Lambda wires it (awsClients, HttpClient sized to the concurrency,
 *   CatalogClient, S3SnapshotStore), with an in-memory cursor store (with latency) or DynamoDB.
 * - `sequential`: the documented algorithm (catalog-protocol.md, "The cursor") with the same clients, one leaf
 *   at a time: fetch it, then PUT it; a commit's manifest after its leaves; the cursor at the end.
 * - `ceiling` / `ceiling-lean`: a bare loop over the same leaves (planned before the clock starts), `concurrency`
 *   workers doing GET + decompress + PUT, no validation, ordering, manifests or cursor. `ceiling` PUTs with the
 *   same AWS SDK client as the engine; `ceiling-lean` PUTs with plain undici, signed with SigV4 (sigv4.ts): what
 *   the PUT costs without the SDK's middleware stack.
 */
import { runCeiling, runSequential } from './baseline-scenarios.js';
import { runEngine } from './engine-scenario.js';
import { profileInto } from './measure.js';
import type { ScenarioConfig, ScenarioResult } from './scenario-types.js';

export type { LeafTimes, ScenarioConfig, ScenarioKind, ScenarioResult } from './scenario-types.js';

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as ScenarioConfig;
  profileInto(config.profileFile);
  let outcome: ScenarioResult;
  switch (config.kind) {
    case 'engine':
      outcome = await runEngine(config);
      break;
    case 'sequential':
      outcome = await runSequential(config);
      break;
    case 'ceiling':
      outcome = await runCeiling(config, false);
      break;
    case 'ceiling-lean':
      outcome = await runCeiling(config, true);
      break;
    default:
      throw new Error(`unknown scenario kind ${String((config as { kind: unknown }).kind)}`);
  }
  process.send!({ type: 'result', result: outcome }, () => process.exit(0));
}

void main().catch((error: unknown) => {
  process.send?.({ type: 'error', error: String((error as Error)?.stack ?? error) }, () => process.exit(1));
});
