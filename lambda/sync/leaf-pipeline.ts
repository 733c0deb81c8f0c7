import { InvalidDocumentError } from '../catalog/errors.js';
import { FetchError } from '../catalog/http-errors.js';
import { redactUrl } from '../contract/redact.js';
import type { CatalogIndex, PageItem } from '../catalog/index.js';
import { formatTimestamp, type Ticks } from '../contract/time.js';
import { commitKey } from '../contract/keys.js';
import type { Checkpointer } from './checkpointer.js';
import { commitsAfter, type CommitWatch, type PlannedCommit } from './commit-stream.js';
import type { EngineDeps, EngineLogger } from './engine-deps.js';
import { manifestKey, quarantineKeyFor } from '../contract/keys.js';
import {
  manifestOf,
  metadataOf,
  placeLeaf,
  quarantineRecordOf,
  type LeafPlacement,
  type ManifestEntry,
} from './layout.js';
import { StoppedBy } from '../contract/run-summary.js';
import { hedged } from './hedge.js';
import type { SyncSettings } from '../contract/settings.js';
import type { WriteOptions } from '../stores/types.js';
import { isRunStop } from '../contract/errors.js';
import { afterGrace, MANIFEST_GRACE_MS } from './run-budget.js';
import { filterCommit } from './id-filter-hook.js';
import { fetchWithin, LeafMemory, type MemoryLease } from './leaf-memory.js';
import { DEFAULT_LEAF_MEMORY_BYTES } from '../contract/leaf-memory.js';

/** A commit being worked on. */
class CommitWork {
  remaining: number;
  /** Its manifest's entries; dropped once the manifest is stored. */
  entries: ManifestEntry[] = [];
  leaves = 0;
  deletes = 0;
  quarantined = 0;
  bytes = 0;
  failed = false;
  /** Its manifest is stored: the cursor may move over it once every earlier commit's is stored too. */
  manifestStored = false;
  /** A leaf's request was aborted by the run's stop: the commit is incomplete, but nothing failed. */
  aborted = false;
  constructor(
    readonly commit: PlannedCommit,
    readonly manifestKey: string,
  ) {
    this.remaining = commit.items.length;
  }
}

/**
 * A leaf whose fetch and PUT have taken this long gives its slot back, and a leaf or manifest PUT that has not
 * answered by then is sent once more ({@link hedged}): a slow S3 PUT (S3's tail runs to seconds) then holds back
 * neither the other leaves nor, for long, the cursor. Several times nuget.org's p99 of a leaf (tens to a few
 * hundred ms), so a healthy run hardly ever sees one (and pays for the rare second PUT).
 */
export const STRAGGLER_MS = 1_000;

/** The leaf memory budget of a caller that gives none (`EngineDeps.leafMemory`): the default function's. */
const DEFAULT_BUDGET = { bytes: DEFAULT_LEAF_MEMORY_BYTES, from: "the engine's default, a quarter of 512 MB" };

/** What a slice has completed: whole commits and what they hold. */
export interface RunTotals {
  commits: number;
  leaves: number;
  deletes: number;
  quarantined: number;
  bytes: number;
}

/** Everything one pipeline run works with. */
export interface PipelineContext {
  readonly settings: SyncSettings;
  /** The engine's dependencies, with the run's deadline and abort signal. */
  readonly deps: EngineDeps;
  readonly logger: EngineLogger;
  /** Moves the cursor as commits complete, in commit order. */
  readonly checkpointer: Checkpointer;
  /** The stored cursor: the pipeline takes commits after it. */
  readonly cursor: Ticks;
  /** The newest commit the pipeline may take. */
  readonly upper: Ticks;
  /** The catalog index read for this run (a backfill range: an index of the range's pages alone). */
  readonly index: CatalogIndex;
  /**
   * No `maxCommits` / `maxLeaves` limit (a backfill range takes every commit up to `upper`; memory stays flat since
   * finalized commits are dropped), and each checkpoint carries the totals so far. Off for the follower.
   */
  readonly unlimited?: boolean;
  /** What the follower watches the commit stream for: commits from the future, commits behind the cursor. */
  readonly watch?: CommitWatch;
}

/** How the pipeline ended: facts for `decideStop` (stop-reason.ts), which alone decides the run's stop reason. */
export interface PipelineOutcome {
  /**
   * Why the pipeline stopped taking commits (a limit, the run's stop signal, a lost race, an error); undefined when it
   * took every one. `time-budget` stands for either stop of the run's signal, the deadline or the caller's
   * (`decideStop` tells them apart).
   */
  halt: StoppedBy | undefined;
  /** Every commit up to the upper bound was taken and completed. */
  exhausted: boolean;
  failure: unknown;
  /** The commits finalized (manifest written, cursor asked to move) and what they hold. */
  totals: RunTotals;
}

/**
 * The leaf pipeline: takes whole commits from the commit stream within the limits, keeps `CONCURRENCY` leaves in
 * flight (fetch, validate, PUT), writes each commit's manifest as soon as its leaves are stored (manifests in any
 * order), and asks the checkpointer to move the cursor over each run of commits whose manifests are all stored.
 * Never throws: a failure is returned, after every commit completed before it is finalized.
 */
export async function runPipeline(context: PipelineContext): Promise<PipelineOutcome> {
  const { settings, deps, logger, checkpointer, cursor, upper, index } = context;
  const totals: RunTotals = { commits: 0, leaves: 0, deletes: 0, quarantined: 0, bytes: 0 };
  const { catalog, snapshots, deadline, signal } = deps;
  const memory = deps.leafMemory ?? new LeafMemory(DEFAULT_BUDGET);
  const bounds = { ...(deadline === undefined ? {} : { deadline }), ...(signal === undefined ? {} : { signal }) };
  const writes = {
    ...(signal === undefined ? {} : { signal }),
    ...(deps.onPutRetry === undefined ? {} : { onRetry: deps.onPutRetry }),
  };
  // A completed commit's manifest may land up to MANIFEST_GRACE_MS past the stop.
  const grace = afterGrace(signal, MANIFEST_GRACE_MS);
  const manifestPuts = { ...writes, ...(grace.signal === undefined ? {} : { signal: grace.signal }) };
  // Commits taken, in order; a finalized commit's slot is emptied so its page items and manifest entries are
  // not held until the end of the slice (memory stays flat however many commits a slice takes).
  const work: (CommitWork | undefined)[] = [];
  // Leaves in flight, with when each began. A slot counter with a FIFO of waiters: unlike Promise.race over the
  // in-flight set, a leaf stalled for a long time does not collect one reaction per completed neighbour.
  const inFlight = new Map<Promise<void>, number>();
  const waiters: (() => void)[] = [];
  const slotFreed = (): Promise<void> => new Promise((resolve) => waiters.push(resolve));
  // Leaves in flight for over STRAGGLER_MS: they no longer hold a slot, up to `concurrency` of them (so at most
  // twice `concurrency` leaves are ever in flight). What they hold is bounded by bytes, not by their count: the leaf
  // memory budget (leaf-memory.ts) counts a straggler's body until its PUT ends.
  const stragglers = new Set<Promise<void>>();
  const slotsTaken = (): number => inFlight.size - stragglers.size;
  const findStragglers = (): void => {
    const before = performance.now() - STRAGGLER_MS;
    for (const [task, startedAt] of inFlight) {
      if (stragglers.size >= settings.concurrency) break;
      if (startedAt <= before && !stragglers.has(task)) {
        stragglers.add(task);
        waiters.shift()?.();
      }
    }
  };
  const stragglerWatch = setInterval(findStragglers, STRAGGLER_MS / 4);
  stragglerWatch.unref();
  let finalized = 0;
  let stop: StoppedBy | undefined;
  let failure: unknown;
  let exhausted = false;
  let leavesTaken = 0;

  const fail = (error: unknown): void => {
    failure ??= error;
    stop = StoppedBy.error;
  };
  /** The run's signal stopped a request: a stop at the budget, unless something failed already. */
  const halt = (): void => {
    if (stop !== StoppedBy.error) stop = StoppedBy.timeBudget;
  };

  /**
   * Counts the commits at the head of the line whose manifests are stored, and asks the checkpointer to move past
   * them: the cursor only ever moves over a run of commits whose manifests are all stored. A commit that failed
   * or was aborted never has its manifest stored, so it holds back itself and every later commit.
   */
  const advanceHead = (): void => {
    while (finalized < work.length && work[finalized]!.manifestStored) {
      const done = work[finalized]!;
      work[finalized] = undefined;
      finalized++;
      totals.commits++;
      totals.leaves += done.leaves;
      totals.deletes += done.deletes;
      totals.quarantined += done.quarantined;
      totals.bytes += done.bytes;
      checkpointer.advance(done.commit.ticks, done.commit.commitId, context.unlimited ? { ...totals } : undefined);
      deps.onProgress?.({
        commits: totals.commits,
        leaves: totals.leaves,
        bytes: totals.bytes,
        cursor: done.commit.ticks,
        upper,
      });
    }
  };
  /**
   * A commit whose leaves are all stored gets its manifest at once, whatever earlier commits are doing (the
   * contract: manifests appear in any order, `watermark.json` is the watermark), so commits finalize at the pace
   * of their leaves rather than one per S3 round trip, and a slow PUT delays only the cursor.
   */
  const manifestWrites = new Set<Promise<void>>();
  const writeManifest = (done: CommitWork): void => {
    const manifest = manifestOf(done.commit, done.entries);
    const write: Promise<void> = hedged(
      (answered) => snapshots.putJson(done.manifestKey, manifest, untilAnswered(manifestPuts, answered)),
      STRAGGLER_MS,
    )
      .then(
        () => {
          done.manifestStored = true;
          done.entries = [];
          advanceHead();
        },
        (error: unknown) => {
          if (isRunStop(error)) halt();
          else fail(error);
        },
      )
      .finally(() => manifestWrites.delete(write));
    manifestWrites.add(write);
  };

  const processLeaf = async (commit: CommitWork, item: PageItem, { key, problem }: LeafPlacement): Promise<void> => {
    // The leaf's bytes under the process's leaf memory budget, from its response's headers to its PUT's end.
    let lease: MemoryLease | undefined;
    try {
      // A leaf no store can hold is never fetched nor written: it fails here, alone, like a bad leaf.
      if (problem !== undefined) throw problem;
      const startMs = deps.onLeaf ? performance.now() : 0;
      const fetched = await fetchWithin(catalog, memory, item, bounds);
      const { body } = fetched;
      lease = fetched.lease;
      const fetchedMs = deps.onLeaf ? performance.now() : 0;
      const metadata = metadataOf(item);
      // Each write of the body (a hedge's too) holds it until it ends.
      await hedged(
        (answered) => fetched.lease.during(snapshots.putLeaf(key, body, metadata, untilAnswered(writes, answered))),
        STRAGGLER_MS,
      );
      deps.onLeaf?.(startMs, fetchedMs, performance.now());
      commit.entries.push({ key, id: item.id, version: item.version, type: item.type });
      commit.leaves++;
      commit.bytes += body.length;
      if (item.type === 'PackageDelete') commit.deletes++;
    } catch (error) {
      if (isRunStop(error)) {
        // The run stopped, the leaf did not fail: never quarantined, and its commit is never finalized.
        commit.aborted = true;
        halt();
        return;
      }
      if (settings.quarantine && isSourceFailure(error)) {
        try {
          await snapshots.putJson(quarantineKeyFor(settings.prefix, key), quarantineRecordOf(item, error), writes);
          commit.entries.push({ key, id: item.id, version: item.version, type: item.type, quarantined: true });
          commit.quarantined++;
          logger.warn('leaf quarantined', { url: redactUrl(item.url), error: (error as Error).message });
          return;
        } catch (storeError) {
          if (isRunStop(storeError)) {
            commit.aborted = true;
            halt();
            return;
          }
          // biome-ignore lint/suspicious/noCatchAssign: the store's error replaces the fetch's as the one the commit failed on
          error = storeError;
        }
      }
      commit.failed = true;
      fail(error);
    } finally {
      lease?.release();
      commit.remaining--;
      if (commit.remaining === 0 && !commit.failed && !commit.aborted) writeManifest(commit);
    }
  };

  const shouldStop = (): boolean => {
    if (stop !== undefined) return true;
    if (checkpointer.lostRace) stop = StoppedBy.lostRace;
    else if ((deadline !== undefined && Date.now() >= deadline) || signal?.aborted) stop = StoppedBy.timeBudget;
    return stop !== undefined;
  };

  try {
    commits: for await (const listed of commitsAfter(catalog, index, cursor, upper, bounds, context.watch)) {
      const commit = filterCommit(listed, settings.idFilter);
      if (shouldStop()) break;
      if (!context.unlimited && work.length >= settings.maxCommits) {
        stop = StoppedBy.maxCommits;
        break;
      }
      if (!context.unlimited && work.length > 0 && leavesTaken + commit.items.length > settings.maxLeaves) {
        stop = StoppedBy.maxLeaves;
        break;
      }
      const keys = planKeys(settings.prefix, commit, snapshots.maxKeySegmentBytes);
      const state = new CommitWork(commit, keys.manifest);
      work.push(state);
      leavesTaken += commit.items.length;
      // A commit the id filter emptied has no leaf to finish it: its manifest is due now.
      if (commit.items.length === 0) writeManifest(state);
      for (let i = 0; i < commit.items.length; i++) {
        while (slotsTaken() >= settings.concurrency) await slotFreed();
        if (shouldStop()) break commits;
        const task: Promise<void> = processLeaf(state, commit.items[i]!, keys.leaves[i]!).finally(() => {
          inFlight.delete(task);
          // A straggler's slot was given back already.
          if (!stragglers.delete(task)) waiters.shift()?.();
        });
        inFlight.set(task, performance.now());
      }
    }
    // Every way out of the loop but its end sets `stop`.
    exhausted = stop === undefined;
  } catch (error) {
    // A page aborted by the run's stop ends the slice like the budget does.
    if (isRunStop(error)) halt();
    else fail(error);
  }
  clearInterval(stragglerWatch);
  await Promise.allSettled([...inFlight.keys()]);
  while (manifestWrites.size > 0) await Promise.allSettled([...manifestWrites]);
  grace.release();
  if (failure !== undefined) return { halt: StoppedBy.error, exhausted: false, failure, totals };
  return { halt: stop, exhausted: exhausted && finalized === work.length, failure, totals };
}

/** Keys of a commit's leaves and manifest, checked for two items that would share a key. */
function planKeys(
  prefix: string,
  commit: PlannedCommit,
  maxSegmentBytes?: number,
): { commitKey: string; manifest: string; leaves: LeafPlacement[] } {
  const key = commitKey(commit.ticks);
  const seen = new Map<string, string>();
  const leaves = commit.items.map((item) => {
    const placement = placeLeaf(prefix, key, item, maxSegmentBytes);
    const leafKey = placement.key;
    const other = seen.get(leafKey);
    if (other !== undefined) {
      throw new InvalidDocumentError(
        item.url,
        `commit ${formatTimestamp(commit.ticks)} lists package ${item.id} ${item.version} twice (also ${other})`,
      );
    }
    seen.set(leafKey, item.url);
    return placement;
  });
  return { commitKey: key, manifest: manifestKey(prefix, key), leaves };
}

/** `options` that also call `answered` on an error answer of the store (hedge.ts: such a write is not hedged). */
function untilAnswered(options: WriteOptions, answered: () => void): WriteOptions {
  const { onAnswer } = options;
  return {
    ...options,
    onAnswer: (status) => {
      answered();
      onAnswer?.(status);
    },
  };
}

/** A failure of the source (after retries) or of its document: what quarantine may set aside. */
function isSourceFailure(error: unknown): boolean {
  return error instanceof FetchError || error instanceof InvalidDocumentError;
}
