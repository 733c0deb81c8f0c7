/** Why a run stopped. */
export const StoppedBy = {
  caughtUp: 'caught-up',
  maxCommits: 'max-commits',
  maxLeaves: 'max-leaves',
  timeBudget: 'time-budget',
  dependency: 'dependency',
  lostRace: 'lost-race',
  /** A backfill of the cursor holds a live lease: the follower leaves the work to it. */
  backfill: 'backfill',
  error: 'error',
} as const;

/** One of {@link StoppedBy}'s values. */
export type StoppedBy = (typeof StoppedBy)[keyof typeof StoppedBy];

/** What a run did: returned by the Lambda, printed by the CLI, stored in the run log. */
export interface RunSummary {
  /** A kuuid id: the run log's sort key is `run#` + this. */
  readonly runId: string;
  readonly cursorName: string;
  /** Seven fractional digits, as stored. */
  readonly cursorBefore: string;
  readonly cursorAfter: string;
  /** Commits completed and checkpointed. */
  readonly commits: number;
  /** Leaves stored in completed commits (quarantined ones excluded). */
  readonly leaves: number;
  /** Of those, `PackageDelete` leaves. */
  readonly deletes: number;
  /** Leaves set aside under `quarantine/`. */
  readonly quarantined: number;
  /** Bytes of leaf bodies stored in completed commits. */
  readonly bytes: number;
  /** True when the cursor reached the catalog head (or the dependency bound). */
  readonly caughtUp: boolean;
  readonly stoppedBy: StoppedBy;
  readonly durationMs: number;
}
