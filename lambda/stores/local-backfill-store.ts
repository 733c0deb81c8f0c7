import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { BackfillStatus, type BackfillPlan, type BackfillTotals, type RangeState } from '../contract/backfill.js';
import type { RunSummary } from '../contract/run-summary.js';
import type { RenameGuard } from './atomic-file.js';
import type { LocalLock } from './local-lock.js';
import { isPlainObject, type LocalFolder, readTextIfExists } from './local-folder.js';
import { LocalStateError } from './local-state-error.js';
import { isOwnWrite } from './own-write.js';
import type { ActivePlanClaim, BackfillStore, RangeFinal, RangeProgress, RangeWriteResult } from './types.js';

/** Backfills of the folder, in its state folder: `backfill/<cursor>/<id>/plan.json` and `range-<n>.json`. */
const BACKFILL_DIR = 'backfill';
/** The cursors' active-plan claims: `backfill-active/<cursor>.json` (beside, not inside, the plan folders). */
const ACTIVE_DIR = 'backfill-active';
const PLAN_FILE = 'plan.json';
const RANGE_FILE = /^range-(0|[1-9][0-9]*)\.json$/;

/**
 * The backfill plans and range states of a local folder: one JSON file per plan and per range, in the state
 * folder. Reads take no lock; every conditional write reads, compares and writes its file under a lock (renamed
 * into place only while the lock is still held), as the cursor store does, so range workers in several processes
 * are as safe as Lambdas on DynamoDB: plans under the folder's lock, each range under a lock of its own.
 */
export class LocalBackfillStore implements BackfillStore {
  constructor(private readonly folder: LocalFolder) {}

  async createPlan(plan: BackfillPlan): Promise<boolean> {
    return this.folder.lock.hold(async (held) => {
      const path = this.planPath(plan.cursorName, plan.backfillId);
      if ((await readTextIfExists(path)) !== undefined) return false;
      await this.write(path, plan, held.whileHeld);
      return true;
    });
  }

  async readPlan(cursorName: string, backfillId: string): Promise<BackfillPlan | undefined> {
    return this.readJson<BackfillPlan>(this.planPath(cursorName, backfillId), 'backfillId');
  }

  async newestPlan(cursorName: string): Promise<BackfillPlan | undefined> {
    const ids = await listDir(this.cursorDir(cursorName));
    // kuuid ids sort by time; one that is not a plan folder (no plan file yet) is passed over.
    for (const id of ids.sort().reverse()) {
      const plan = await this.readPlan(cursorName, id);
      if (plan !== undefined) return plan;
    }
    return undefined;
  }

  async renewLease(
    cursorName: string,
    backfillId: string,
    leaseUntil: number,
    holder?: string,
    now = Date.now(),
  ): Promise<void> {
    await this.updatePlan(cursorName, backfillId, (plan) => {
      if (plan.leaseUntil >= leaseUntil) return undefined;
      // Still its holder's (a lease given back has none); without a holder, a lease still live.
      if (holder === undefined ? plan.leaseUntil <= now : plan.leaseHolder !== holder) return undefined;
      return { ...plan, leaseUntil };
    });
  }

  async finishPlan(
    cursorName: string,
    backfillId: string,
    finishedAt: string,
    summary: RunSummary,
  ): Promise<BackfillPlan> {
    return this.folder.lock.hold(async (held) => {
      const path = this.planPath(cursorName, backfillId);
      const plan = await this.readJson<BackfillPlan>(path, 'backfillId');
      if (plan === undefined) throw new LocalStateError(`${path}: no such backfill plan`);
      if (plan.status === BackfillStatus.finished) return plan;
      const finished: BackfillPlan = { ...plan, status: BackfillStatus.finished, finishedAt, summary };
      await this.write(path, finished, held.whileHeld);
      return finished;
    });
  }

  async readRange(cursorName: string, backfillId: string, n: number): Promise<RangeState | undefined> {
    return this.readJson<RangeState>(this.rangePath(cursorName, backfillId, n), 'n');
  }

  async advanceRange(
    cursorName: string,
    backfillId: string,
    n: number,
    expected: string | undefined,
    next: RangeProgress,
  ): Promise<RangeWriteResult> {
    return this.rangeLock(cursorName, backfillId, n).hold(async (held) => {
      const path = this.rangePath(cursorName, backfillId, n);
      const current = await this.readJson<RangeState>(path, 'n');
      // A done range's totals never change again.
      if (current?.progress !== expected || current?.done) {
        // A repeat of a write already stored (a caller retrying after an error past the rename): written.
        const mark =
          current === undefined || current.done
            ? undefined
            : { stored: current.progress, runId: (current as { runId?: string }).runId };
        if (isOwnWrite(mark, { stored: next.progress, runId: next.runId })) return { outcome: 'written' };
        return { outcome: 'conflict', current };
      }
      const state: RangeState & { runId: string } = {
        n,
        done: false,
        progress: next.progress,
        progressCommitId: next.progressCommitId,
        ...totals(next.totals),
        updatedAt: new Date().toISOString(),
        runId: next.runId,
      };
      await this.write(path, state, held.whileHeld);
      return { outcome: 'written' };
    });
  }

  async markRangeDone(cursorName: string, backfillId: string, n: number, final: RangeFinal): Promise<RangeState> {
    return this.rangeLock(cursorName, backfillId, n).hold(async (held) => {
      const path = this.rangePath(cursorName, backfillId, n);
      const current = await this.readJson<RangeState>(path, 'n');
      if (current?.done) return current;
      // The final progress, unless a stored one is newer (it never moves back).
      const keep =
        final.progress === undefined || (current?.progress !== undefined && current.progress > final.progress);
      const progress = keep ? current?.progress : final.progress;
      const progressCommitId = keep ? current?.progressCommitId : final.progressCommitId;
      const state: RangeState = {
        n,
        done: true,
        ...(progress === undefined ? {} : { progress }),
        ...(progressCommitId === undefined ? {} : { progressCommitId }),
        ...totals(final.totals),
        updatedAt: new Date().toISOString(),
      };
      await this.write(path, state, held.whileHeld);
      return state;
    });
  }

  async listRanges(cursorName: string, backfillId: string): Promise<RangeState[]> {
    const names = await listDir(join(this.cursorDir(cursorName), backfillId));
    const states: RangeState[] = [];
    for (const name of names) {
      const match = RANGE_FILE.exec(name);
      if (!match) continue;
      const state = await this.readRange(cursorName, backfillId, Number(match[1]));
      if (state !== undefined) states.push(state);
    }
    return states.sort((a, b) => a.n - b.n);
  }

  async claimActive(
    cursorName: string,
    backfillId: string,
    replacing: string | undefined,
    claimedAt: number,
    holder?: string,
  ): Promise<boolean> {
    return this.folder.lock.hold(async (held) => {
      const current = await this.readActive(cursorName);
      if (current?.backfillId !== replacing) return false;
      await this.write(
        this.activePath(cursorName),
        { backfillId, claimedAt, ...(holder === undefined ? {} : { holder }) },
        held.whileHeld,
      );
      return true;
    });
  }

  async readActive(cursorName: string): Promise<ActivePlanClaim | undefined> {
    const claim = await this.readJson<Partial<ActivePlanClaim>>(this.activePath(cursorName), 'backfillId');
    if (typeof claim?.backfillId !== 'string') return undefined;
    return {
      backfillId: claim.backfillId,
      claimedAt: Number(claim.claimedAt ?? 0),
      ...(typeof claim.holder === 'string' ? { holder: claim.holder } : {}),
    };
  }

  async releaseActive(cursorName: string, backfillId: string): Promise<void> {
    await this.folder.lock.hold(async (held) => {
      if ((await this.readActive(cursorName))?.backfillId !== backfillId) return;
      await this.write(this.activePath(cursorName), { backfillId: null }, held.whileHeld);
    });
  }

  async setLease(
    cursorName: string,
    backfillId: string,
    leaseUntil: number,
    expected: number | undefined,
    holder?: string,
  ): Promise<boolean> {
    return this.updatePlan(cursorName, backfillId, (plan) => {
      if (expected !== undefined && plan.leaseUntil !== expected) return undefined;
      const { leaseHolder: _held, ...rest } = plan;
      return { ...rest, leaseUntil, ...(holder === undefined ? {} : { leaseHolder: holder }) };
    });
  }

  async abandonPlan(cursorName: string, backfillId: string, abandonedAt: string): Promise<boolean> {
    return this.updatePlan(cursorName, backfillId, (plan) => ({
      ...plan,
      status: BackfillStatus.abandoned,
      abandonedAt,
    }));
  }

  /** Rewrites a running plan under the folder's lock with `change` (undefined: no change); true when written. */
  private async updatePlan(
    cursorName: string,
    backfillId: string,
    change: (plan: BackfillPlan) => BackfillPlan | undefined,
  ): Promise<boolean> {
    return this.folder.lock.hold(async (held) => {
      const path = this.planPath(cursorName, backfillId);
      const plan = await this.readJson<BackfillPlan>(path, 'backfillId');
      if (plan === undefined || plan.status !== BackfillStatus.running) return false;
      const changed = change(plan);
      if (changed === undefined) return false;
      await this.write(path, changed, held.whileHeld);
      return true;
    });
  }

  private activePath(cursorName: string): string {
    return join(this.folder.stateDir, ACTIVE_DIR, `${nameOnDisk(cursorName)}.json`);
  }

  /**
   * The lock of one range's file: range workers of one backfill (in several processes) each write their own
   * range's file, so each range has a lock of its own and they never wait for each other; duplicates of one range
   * still take turns. Plans keep the folder's lock.
   */
  private rangeLock(cursorName: string, backfillId: string, n: number): LocalLock {
    return this.folder.namedLock(`backfill.${nameOnDisk(cursorName)}.${checkedId(backfillId)}.range-${n}.lock`);
  }

  private cursorDir(cursorName: string): string {
    return join(this.folder.stateDir, BACKFILL_DIR, nameOnDisk(cursorName));
  }

  private planPath(cursorName: string, backfillId: string): string {
    return join(this.cursorDir(cursorName), checkedId(backfillId), PLAN_FILE);
  }

  private rangePath(cursorName: string, backfillId: string, n: number): string {
    return join(this.cursorDir(cursorName), checkedId(backfillId), `range-${n}.json`);
  }

  private async write(path: string, value: unknown, guard: RenameGuard): Promise<void> {
    await this.folder.writer.write(path, Buffer.from(JSON.stringify(value, null, 1)), guard);
  }

  private async readJson<T>(path: string, field: string): Promise<T | undefined> {
    const text = await readTextIfExists(path);
    if (text === undefined) return undefined;
    try {
      const parsed = JSON.parse(text) as unknown;
      if (!isPlainObject(parsed) || !(field in parsed)) throw new Error(`not a JSON object with "${field}"`);
      return parsed as T;
    } catch (cause) {
      throw new LocalStateError(`${path}: not a valid backfill file: ${(cause as Error).message}`, { cause });
    }
  }
}

function totals(value: BackfillTotals): BackfillTotals {
  return {
    commits: value.commits,
    leaves: value.leaves,
    deletes: value.deletes,
    quarantined: value.quarantined,
    bytes: value.bytes,
  };
}

/**
 * A plan's name as a file name: a cursor name is plain (A-Z a-z 0-9 . _ -, no leading dot) and stays as it is; a
 * view rebuild's is its consumer's key (`consumer#./{prefix}#view-latest`), whose `/` and `#` are percent-encoded.
 */
function nameOnDisk(name: string): string {
  return encodeURIComponent(name);
}

/** A backfill id as a folder name: base-62 only, so it can never leave the cursor's folder. */
function checkedId(backfillId: string): string {
  if (!/^[0-9A-Za-z]+$/.test(backfillId))
    throw new LocalStateError(`backfill id ${JSON.stringify(backfillId)} is not a kuuid id`);
  return backfillId;
}

async function listDir(path: string): Promise<string[]> {
  try {
    return await readdir(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}
