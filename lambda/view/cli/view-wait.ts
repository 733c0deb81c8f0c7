/**
 * `catalog-sync view` while a rebuild of the mirror's view holds its live lease: upkeep waits for it, since the
 * rebuild moves the view consumer's cursor to its bound when it finishes. Without `--follow` it says so and stops;
 * with `--follow` it polls, takes over once the rebuild is over, and goes back to waiting when one starts.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { rebuildRunning, type RunningRebuild } from '../rebuild/held-off.js';
import { rebuildPlanName } from '../rebuild/stores.js';
import type { ViewStores } from '../open-folder.js';
import type { ViewRunResult } from '../view-consumer.js';

/**
 * Runs upkeep (`run`) unless a rebuild holds the view: then tells it and stops, or, following, waits for the
 * rebuild to end (and, while upkeep follows, stops it to wait when a rebuild starts). Undefined when it stopped
 * waiting (told, or the signal).
 */
export async function keepViewAfterRebuilds(
  stores: ViewStores,
  consumer: string,
  follow: boolean,
  pollMs: number,
  signal: AbortSignal,
  run: (signal: AbortSignal) => Promise<ViewRunResult>,
  json = false,
): Promise<ViewRunResult | undefined> {
  const planName = rebuildPlanName(stores.mirror, consumer);
  const running = () => rebuildRunning(stores.plans, planName);
  let told: string | undefined;
  for (;;) {
    const rebuild = await running();
    if (rebuild !== undefined) {
      if (told !== rebuild.rebuildId) tell(consumer, rebuild, follow, json);
      told = rebuild.rebuildId;
      if (!follow) return undefined;
      await sleep(pollMs, undefined, { signal }).catch(() => undefined);
      if (signal.aborted) return undefined;
      continue;
    }
    if (!follow) return run(signal);
    // Following: a rebuild that starts meanwhile stops this pass, and the loop waits for it.
    const pass = new AbortController();
    const stop = (): void => pass.abort();
    signal.addEventListener('abort', stop, { once: true });
    let started = false;
    // One look at a time: on a slow store (a loaded machine, a folder's state lock) looks that overlapped would pile
    // up and slow each other down.
    let looking = false;
    const watch = setInterval(() => {
      if (looking) return;
      looking = true;
      void running()
        .then(
          (found) => {
            if (found === undefined) return;
            started = true;
            pass.abort();
          },
          () => undefined,
        )
        .finally(() => {
          looking = false;
        });
    }, pollMs);
    try {
      const result = await run(pass.signal);
      if (!started || signal.aborted) return result;
    } finally {
      clearInterval(watch);
      signal.removeEventListener('abort', stop);
    }
  }
}

function tell(consumer: string, rebuild: RunningRebuild, follow: boolean, json: boolean): void {
  if (json && !follow) {
    process.stdout.write(`${JSON.stringify({ consumer, stoppedBy: 'rebuild-running', rebuild })}\n`);
    return;
  }
  process.stderr.write(
    `view ${consumer}: waiting for view rebuild ${rebuild.rebuildId} (held by ${rebuild.holder ?? 'an unnamed holder'}, lease until ${new Date(rebuild.leaseUntil).toISOString()}): ` +
      `it moves the cursor to its bound when it finishes${follow ? '; upkeep goes on after it' : '; run `catalog-sync view` again after it'}\n`,
  );
}
