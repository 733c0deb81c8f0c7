/**
 * A slice's opening reads, started together: the run's cursor, the backfill lease of its cursor and every
 * dependency cursor at once, and the catalog index as soon as the lease is known not to be live (a follower held off
 * by a backfill never reads the catalog). Each is a round trip (on a cold Lambda the SDK's first call also spends
 * 10–30 ms of CPU before sending), so one after another they cost the sum of their waits; together, about the
 * longest. The engine still decides in the documented order and awaits each read in it, so a failure surfaces
 * exactly as when they ran one after another: the cursor's first, then the lease's, then a dependency's, then the
 * index's. Reads are never writes: starting one early changes nothing stored, and the cursor writes stay
 * conditional on the value this cursor read found.
 */
import type { CatalogIndex } from '../catalog/documents.js';
import { BackfillStatus } from '../contract/backfill.js';
import { MIN_TICKS, type Ticks } from '../contract/time.js';
import type { RequestBounds } from '../catalog/http-options.js';
import type { CursorState } from '../stores/types.js';
import type { EngineDeps } from './engine-deps.js';

/** The reads in flight; await each where the engine used to make it. */
export interface OpeningReads {
  /** The run's own cursor (not bounded by the run's signal, as before). */
  readonly cursor: Promise<CursorState | undefined>;
  /** True when the newest backfill plan of the run's cursor is running and its lease has not expired. */
  readonly backfillActive: Promise<boolean>;
  /** The lowest dependency cursor (MIN_TICKS for one not yet stored), undefined with no dependency. */
  readonly dependencyBound: Promise<Ticks | undefined>;
  /**
   * The catalog index, asked for as soon as the lease is known not to be live (under a live backfill, or when the
   * lease cannot be read, it is never asked for: undefined).
   */
  readonly index: Promise<CatalogIndex | undefined>;
  /** Aborts what is still in flight and drops every result not awaited (a failure is never left unhandled). */
  cancel(): void;
}

/** `promise`, with a rejection marked as handled until someone awaits it. */
function held<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

/**
 * Starts the opening reads of a slice of `cursorName`. `signal` is the run's budget (deadline, Ctrl-C), which
 * bounds every read but the run's own cursor; `bounds` the index fetch's.
 */
export function startOpeningReads(
  cursorName: string,
  dependsOn: readonly string[],
  deps: Pick<EngineDeps, 'catalog' | 'cursors' | 'backfills'>,
  signal: AbortSignal | undefined,
  bounds: RequestBounds,
): OpeningReads {
  const backfills = deps.backfills;
  // The lease first: the index waits for its answer, so it goes on the wire before the SDK's work for the others.
  const backfillActive = held(
    backfills === undefined
      ? Promise.resolve(false)
      : backfills
          .newestPlan(cursorName, { signal })
          .then((plan) => plan !== undefined && plan.status === BackfillStatus.running && plan.leaseUntil > Date.now()),
  );
  const cursor = held(deps.cursors.read(cursorName));
  // Each dependency read at once; the bound awaits them in their order, so the first failing one is the one told.
  const dependencies = dependsOn.map((dependency) => held(deps.cursors.read(dependency, { signal })));
  const dependencyBound = held(
    (async () => {
      let bound: Ticks | undefined;
      for (const read of dependencies) {
        const value = (await read)?.value ?? MIN_TICKS;
        if (bound === undefined || value < bound) bound = value;
      }
      return bound;
    })(),
  );
  const dropped = new AbortController();
  const indexSignal = signal === undefined ? dropped.signal : AbortSignal.any([signal, dropped.signal]);
  const index = held(
    backfillActive.then((active) => (active ? undefined : deps.catalog.getIndex({ ...bounds, signal: indexSignal }))),
  );
  return {
    cursor,
    backfillActive,
    dependencyBound,
    index,
    cancel: () => dropped.abort(),
  };
}
