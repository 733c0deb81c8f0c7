import type { CatalogClient } from '../catalog/catalog-client.js';
import { InvalidDocumentError } from '../catalog/errors.js';
import { FetchError } from '../catalog/http-errors.js';
import { redactUrl } from '../catalog/redact.js';
import type { PageItem } from '../catalog/schemas.js';
import { formatTimestamp, MIN_TICKS, ticksToEpochMs, type Ticks } from '../catalog/timestamp.js';
import { commitKey } from '../ids/commit-key.js';
import { id as newId } from '../ids/kuuid.js';
import type { CursorStore, RunLogStore, SnapshotStore } from '../stores/types.js';
import { Checkpointer } from './checkpointer.js';
import { commitsAfter, type PlannedCommit } from './commit-stream.js';
import { leafKeyOf, manifestKeyOf, manifestOf, metadataOf, quarantineKeyOf, quarantineRecordOf, type ManifestEntry } from './layout.js';
import { StoppedBy, type RunSummary } from './run-summary.js';
import type { SyncSettings } from './settings.js';

/** Structured logging, as Powertools Logger offers it. */
export interface EngineLogger {
  info(message: string, extra?: Record<string, unknown>): void;
  warn(message: string, extra?: Record<string, unknown>): void;
  error(message: string, extra?: Record<string, unknown>): void;
}

/** Progress after each completed commit, for progress bars and metrics. */
export interface Progress {
  readonly commits: number;
  readonly leaves: number;
  readonly bytes: number;
  readonly cursor: Ticks;
  /** The newest commit this run may reach. */
  readonly upper: Ticks;
}

/** What the engine talks to. */
export interface EngineDeps {
  readonly catalog: CatalogClient;
  readonly cursors: CursorStore;
  readonly snapshots: SnapshotStore;
  readonly runLog?: RunLogStore;
  readonly logger?: EngineLogger;
  /** Epoch ms after which the run takes no new leaf, then checkpoints and returns. */
  readonly deadline?: number;
  /** Aborting stops the run like the time budget does (Ctrl-C in the CLI). */
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: Progress) => void;
  /** Days a run-log record is kept (TTL). */
  readonly runLogDays?: number;
  /** The run id to use (a kuuid id); a new one when absent. */
  readonly runId?: string;
  /** Told the catalog head once the index is read: for the lag metric. */
  readonly onIndex?: (head: Ticks) => void;
  /** Told each stored leaf's timing (`performance.now()` ms: fetch start, fetched, PUT done); for the benchmark. */
  readonly onLeaf?: (startMs: number, fetchedMs: number, storedMs: number) => void;
}

/** A run that stopped on an error: carries the summary of what it completed before the error. */
export class SyncError extends Error {
  override readonly name = 'SyncError';
  constructor(
    readonly summary: RunSummary,
    cause: unknown,
  ) {
    super(`run ${summary.runId} stopped at ${summary.cursorAfter}: ${(cause as Error)?.message ?? String(cause)}`, { cause });
  }
}

/** A commit being worked on. */
class CommitWork {
  remaining: number;
  readonly entries: ManifestEntry[] = [];
  leaves = 0;
  deletes = 0;
  quarantined = 0;
  bytes = 0;
  failed = false;
  constructor(
    readonly commit: PlannedCommit,
    /** The 12-character commit key. */
    readonly commitKey: string,
    readonly manifestKey: string,
  ) {
    this.remaining = commit.items.length;
  }
}

const DEFAULT_RUN_LOG_DAYS = 30;
const NOOP_LOGGER: EngineLogger = { info() {}, warn() {}, error() {} };

/**
 * Runs one bounded slice: reads the cursor, takes whole commits after it in commit order (bounded by the
 * limits, the time budget and every dependency cursor), stores each leaf and each commit's manifest, and moves
 * the cursor with conditional writes as commits complete. Returns the run summary; throws {@link SyncError}
 * (with the summary) when a document or fetch failed, after checkpointing every commit completed before it.
 */
export async function runSlice(settings: SyncSettings, deps: EngineDeps): Promise<RunSummary> {
  const started = Date.now();
  const runId = deps.runId ?? newId();
  const logger = deps.logger ?? NOOP_LOGGER;
  const stored = await deps.cursors.read(settings.cursorName);
  const cursorBefore = stored?.value ?? settings.startCursor;
  const checkpointer = new Checkpointer(deps.cursors, settings.cursorName, stored, runId);
  const totals = { commits: 0, leaves: 0, deletes: 0, quarantined: 0, bytes: 0 };
  let stoppedBy: StoppedBy = StoppedBy.caughtUp;
  let caughtUp = false;
  let failure: unknown;
  let upper: Ticks = MIN_TICKS;
  const deadline = deps.deadline;

  try {
    let dependencyBound: Ticks | undefined;
    for (const dependency of settings.dependsOn) {
      const state = await deps.cursors.read(dependency);
      const value = state?.value ?? MIN_TICKS;
      if (dependencyBound === undefined || value < dependencyBound) dependencyBound = value;
    }
    const index = await deps.catalog.getIndex(deadline);
    deps.onIndex?.(index.commitTicks);
    if (index.commitTicks < cursorBefore) {
      logger.warn('stale catalog index: it is older than the stored cursor; nothing to do', {
        indexCommitTimeStamp: formatTimestamp(index.commitTicks),
        cursor: formatTimestamp(cursorBefore),
      });
      upper = cursorBefore;
      caughtUp = true;
    } else {
      const boundByDependency = dependencyBound !== undefined && dependencyBound < index.commitTicks;
      upper = boundByDependency ? dependencyBound! : index.commitTicks;
      // Already at the bound: no page needs reading.
      const outcome =
        upper <= cursorBefore
          ? { stoppedBy: StoppedBy.caughtUp, exhausted: true, failure: undefined }
          : await syncCommits(settings, deps, logger, checkpointer, cursorBefore, upper, totals, index);
      stoppedBy = outcome.stoppedBy;
      failure = outcome.failure;
      if (outcome.exhausted && failure === undefined && !checkpointer.lostRace) {
        caughtUp = true;
        stoppedBy = boundByDependency ? StoppedBy.dependency : StoppedBy.caughtUp;
      }
    }
  } catch (error) {
    failure = error;
  }
  try {
    await checkpointer.flush();
  } catch (error) {
    failure ??= error;
  }
  if (checkpointer.lostRace) {
    stoppedBy = StoppedBy.lostRace;
    caughtUp = false;
  }
  if (failure !== undefined) {
    stoppedBy = StoppedBy.error;
    caughtUp = false;
  }
  const cursorAfter = checkpointer.current?.value ?? cursorBefore;
  const summary: RunSummary = {
    runId,
    cursorName: settings.cursorName,
    cursorBefore: formatTimestamp(cursorBefore),
    cursorAfter: formatTimestamp(cursorAfter),
    ...totals,
    caughtUp,
    stoppedBy,
    durationMs: Date.now() - started,
  };
  if (deps.runLog) {
    const days = deps.runLogDays ?? DEFAULT_RUN_LOG_DAYS;
    try {
      await deps.runLog.appendRun(summary, Math.floor(Date.now() / 1000) + days * 86_400);
    } catch (error) {
      logger.warn('could not store the run in the run log', { error: (error as Error).message });
    }
  }
  if (failure !== undefined) {
    logger.error('run stopped on an error', { summary, error: (failure as Error)?.message ?? String(failure) });
    throw new SyncError(summary, failure);
  }
  logger.info('run finished', { summary, lagSeconds: lagSeconds(upper, cursorAfter) });
  return summary;
}

/** Seconds between a commit time and the cursor. */
export function lagSeconds(head: Ticks, cursor: Ticks): number {
  return Math.max(0, (ticksToEpochMs(head) - ticksToEpochMs(cursor)) / 1000);
}

interface SyncOutcome {
  stoppedBy: StoppedBy;
  /** Every commit up to the upper bound was taken and completed. */
  exhausted: boolean;
  failure: unknown;
}

/** The leaf pipeline: many leaves in flight, manifests and checkpoints strictly in commit order. */
async function syncCommits(
  settings: SyncSettings,
  deps: EngineDeps,
  logger: EngineLogger,
  checkpointer: Checkpointer,
  cursor: Ticks,
  upper: Ticks,
  totals: { commits: number; leaves: number; deletes: number; quarantined: number; bytes: number },
  index: Parameters<typeof commitsAfter>[1],
): Promise<SyncOutcome> {
  const { catalog, snapshots, deadline, signal } = deps;
  const work: CommitWork[] = [];
  const inFlight = new Set<Promise<void>>();
  // A slot counter with a FIFO of waiters: unlike Promise.race over the in-flight set, a leaf stalled for a
  // long time does not collect one reaction per completed neighbour.
  const waiters: (() => void)[] = [];
  const slotFreed = (): Promise<void> => new Promise((resolve) => waiters.push(resolve));
  let finalized = 0;
  let stop: StoppedBy | undefined;
  let failure: unknown;
  let exhausted = false;
  let leavesTaken = 0;
  let finalizer: Promise<void> = Promise.resolve();

  const fail = (error: unknown): void => {
    failure ??= error;
    stop = StoppedBy.error;
  };

  let manifestFailed = false;
  /**
   * Writes the manifests of every completed commit at the head of the line, in order, then checkpoints. Runs
   * on after a failure elsewhere: commits before the failed one are still finalized; the failed one blocks
   * every later one.
   */
  const finalizeReady = async (): Promise<void> => {
    while (finalized < work.length && !manifestFailed) {
      const done = work[finalized]!;
      if (done.remaining > 0 || done.failed) return;
      try {
        await snapshots.putJson(done.manifestKey, manifestOf(done.commit, done.entries));
      } catch (error) {
        manifestFailed = true;
        fail(error);
        return;
      }
      finalized++;
      totals.commits++;
      totals.leaves += done.leaves;
      totals.deletes += done.deletes;
      totals.quarantined += done.quarantined;
      totals.bytes += done.bytes;
      checkpointer.advance(done.commit.ticks, done.commit.commitId);
      deps.onProgress?.({ commits: totals.commits, leaves: totals.leaves, bytes: totals.bytes, cursor: done.commit.ticks, upper });
    }
  };
  const kick = (): void => {
    finalizer = finalizer.then(finalizeReady);
  };

  const processLeaf = async (commit: CommitWork, item: PageItem, key: string): Promise<void> => {
    try {
      const startMs = deps.onLeaf ? performance.now() : 0;
      const fetched = await catalog.getLeaf(item, deadline);
      const fetchedMs = deps.onLeaf ? performance.now() : 0;
      await snapshots.putLeaf(key, fetched.body, metadataOf(item));
      deps.onLeaf?.(startMs, fetchedMs, performance.now());
      commit.entries.push({ key, id: item.id, version: item.version, type: item.type });
      commit.leaves++;
      commit.bytes += fetched.body.length;
      if (item.type === 'PackageDelete') commit.deletes++;
    } catch (error) {
      if (settings.quarantine && isSourceFailure(error)) {
        try {
          await snapshots.putJson(quarantineKeyOf(settings.prefix, commit.commitKey, item), quarantineRecordOf(item, error));
          commit.entries.push({ key, id: item.id, version: item.version, type: item.type, quarantined: true });
          commit.quarantined++;
          logger.warn('leaf quarantined', { url: redactUrl(item.url), error: (error as Error).message });
          return;
        } catch (storeError) {
          error = storeError;
        }
      }
      commit.failed = true;
      fail(error);
    } finally {
      commit.remaining--;
      if (commit.remaining === 0) kick();
    }
  };

  const shouldStop = (): boolean => {
    if (stop !== undefined) return true;
    if (checkpointer.lostRace) stop = StoppedBy.lostRace;
    else if ((deadline !== undefined && Date.now() >= deadline) || signal?.aborted) stop = StoppedBy.timeBudget;
    return stop !== undefined;
  };

  try {
    let loopEnded = true;
    commits: for await (const commit of commitsAfter(catalog, index, cursor, upper, deadline)) {
      if (shouldStop()) {
        loopEnded = false;
        break;
      }
      if (work.length >= settings.maxCommits) {
        stop = StoppedBy.maxCommits;
        loopEnded = false;
        break;
      }
      if (work.length > 0 && leavesTaken + commit.items.length > settings.maxLeaves) {
        stop = StoppedBy.maxLeaves;
        loopEnded = false;
        break;
      }
      const keys = planKeys(settings.prefix, commit);
      const state = new CommitWork(commit, keys.commitKey, keys.manifest);
      work.push(state);
      leavesTaken += commit.items.length;
      for (let i = 0; i < commit.items.length; i++) {
        while (inFlight.size >= settings.concurrency) await slotFreed();
        if (shouldStop()) {
          loopEnded = false;
          break commits;
        }
        const task: Promise<void> = processLeaf(state, commit.items[i]!, keys.leaves[i]!).finally(() => {
          inFlight.delete(task);
          waiters.shift()?.();
        });
        inFlight.add(task);
      }
    }
    exhausted = loopEnded && stop === undefined;
  } catch (error) {
    fail(error);
  }
  await Promise.allSettled([...inFlight]);
  kick();
  await finalizer;
  if (failure !== undefined) return { stoppedBy: StoppedBy.error, exhausted: false, failure };
  return { stoppedBy: stop ?? StoppedBy.caughtUp, exhausted: exhausted && finalized === work.length, failure };
}

/** Keys of a commit's leaves and manifest, checked for two items that would share a key. */
function planKeys(prefix: string, commit: PlannedCommit): { commitKey: string; manifest: string; leaves: string[] } {
  const key = commitKey(commit.ticks);
  const seen = new Map<string, string>();
  const leaves = commit.items.map((item) => {
    const leafKey = leafKeyOf(prefix, key, item);
    const other = seen.get(leafKey);
    if (other !== undefined) {
      throw new InvalidDocumentError(
        item.url,
        `commit ${formatTimestamp(commit.ticks)} lists package ${item.id} ${item.version} twice (also ${other})`,
      );
    }
    seen.set(leafKey, item.url);
    return leafKey;
  });
  return { commitKey: key, manifest: manifestKeyOf(prefix, key), leaves };
}

/** A failure of the source (after retries) or of its document: what quarantine may set aside. */
function isSourceFailure(error: unknown): boolean {
  return error instanceof FetchError || error instanceof InvalidDocumentError;
}
