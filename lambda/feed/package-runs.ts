/**
 * The feed's package syncs in flight, at most `limit` at once, one at a time per package in this process: a batch's
 * packages may be started as soon as a commit that touches them is read, ahead of their batch (while the batch
 * before is still being made), and the batch then awaits the very runs its commits started. A run reads the latest
 * view when it begins, and the view's cursor is already past every commit the feed reads (the feed never reads past
 * it), so a run started after its commit was read makes that commit's package; a run already under way for an
 * earlier commit may have read the view before, so a new one is queued after it rather than reused.
 */
import type { MirrorCommit } from '../consumer/mirror.js';
import { limiter } from '../view/commit-leaves.js';
import type { PackageOutcome } from './package-sync.js';

interface Run {
  readonly outcome: Promise<PackageOutcome>;
  /** The {@link PackageRuns.abandonReadAhead} generation it was made in. */
  readonly generation: number;
  /**
   * Started for commits read ahead only, no other start served by it yet: one made before the last
   * {@link PackageRuns.abandonReadAhead} never begins.
   */
  readAheadOnly: boolean;
  /** Whether it has begun (read the view): a commit read since needs a run of its own. */
  started: boolean;
  /** A run made with options of its own (a rebuild's, a repair's) serves no other start. */
  readonly shared: boolean;
}

/** See the module documentation. */
export class PackageRuns {
  private readonly slots: <R>(task: () => Promise<R>) => Promise<R>;
  /** The newest run of each package (lowercased id). */
  private readonly newest = new Map<string, Run>();
  /** The runs each commit read ahead started, by commit key, until its batch takes them. */
  private readonly readAhead = new Map<string, Map<string, Promise<PackageOutcome>>>();
  /** Every run not ended yet. */
  private readonly outstanding = new Set<Promise<unknown>>();
  /** Moved on by {@link abandonReadAhead}. */
  private generation = 0;

  constructor(limit: number) {
    this.slots = limiter(limit);
  }

  /**
   * A run of `id` that begins after now: one queued and not begun yet, or a new one after the package's run under
   * way (`sync` makes the package). `shared` false: a run of its own, whatever is queued (`sync` has options).
   * `readAhead`: started for a commit read ahead of its batch ({@link read}), which {@link abandonReadAhead} may drop.
   */
  start(id: string, sync: () => Promise<PackageOutcome>, shared = true, readAhead = false): Promise<PackageOutcome> {
    const lower = id.toLowerCase();
    const current = this.newest.get(lower);
    const generation = this.generation;
    if (shared && current?.shared && !current.started && !this.abandoned(current)) {
      if (!readAhead) current.readAheadOnly = false;
      return current.outcome;
    }
    const before = current?.outcome.catch(() => undefined);
    const run: Run = {
      shared,
      generation,
      readAheadOnly: readAhead,
      started: false,
      outcome: (async () => {
        await before;
        return this.slots(async () => {
          if (this.abandoned(run)) return ABANDONED;
          run.started = true;
          return sync();
        });
      })().finally(() => {
        if (this.newest.get(lower) === run) this.newest.delete(lower);
      }),
    };
    // A failure is thrown to the batch that awaits the run; a run no batch awaits (its batch failed) is no error.
    const ended = run.outcome.catch(() => undefined);
    this.outstanding.add(ended);
    void ended.then(() => this.outstanding.delete(ended));
    this.newest.set(lower, run);
    return run.outcome;
  }

  /** A run started for commits read ahead only, before the last {@link abandonReadAhead}. */
  private abandoned(run: Run): boolean {
    return run.readAheadOnly && run.generation !== this.generation;
  }

  /** Resolves once no run is under way or queued (those read ahead for commits no batch took included). */
  async idle(): Promise<void> {
    while (this.outstanding.size > 0) await Promise.all(this.outstanding);
  }

  /** Starts the runs of a commit just read (`ids`: by lowercased id), kept for its batch; `sync(lower)` makes one. */
  read(
    commit: MirrorCommit,
    ids: ReadonlyMap<string, unknown>,
    sync: (lower: string) => Promise<PackageOutcome>,
  ): void {
    const runs = new Map<string, Promise<PackageOutcome>>();
    for (const lower of ids.keys())
      runs.set(
        lower,
        this.start(lower, () => sync(lower), true, true),
      );
    this.readAhead.set(commit.commitKey, runs);
  }

  /**
   * The read stopped: the runs started ahead for commits no batch took (and for nothing else), not begun yet, never
   * begin (they resolve as skipped; their commits are read again by the next run), and those commits are forgotten.
   * For a face whose read stopped early (a Lambda's time budget), so that it waits only for runs already writing. Only
   * once no batch is under way: a batch that has not taken its commits yet would make their packages anew.
   */
  abandonReadAhead(): void {
    this.generation++;
    this.readAhead.clear();
  }

  /** The runs a commit read ahead started (forgotten once taken), or none when it was not read ahead. */
  take(commit: MirrorCommit): ReadonlyMap<string, Promise<PackageOutcome>> | undefined {
    const runs = this.readAhead.get(commit.commitKey);
    this.readAhead.delete(commit.commitKey);
    return runs;
  }
}

/** What a run that never began resolves to: no batch awaits it. */
const ABANDONED: PackageOutcome = { outcome: 'skipped' };
