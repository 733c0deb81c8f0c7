/**
 * The plan's lease inside a range longer than the lease: renewed when the range's checkpoint advances and a third
 * of the lease has passed since the last renewal, never per leaf or per commit; a failed renewal is a warning and
 * is tried again at the next checkpoint. No waiting: the range's clock is injected (RangeOptions.now) and a store
 * wrapper makes a whole lease "pass" during the range's first checkpoint write; leaf PUTs after that write are held
 * until the renewal it makes due has settled, so the leaves stored later read the renewed lease from the store,
 * deterministically, while the range still runs. On DynamoDB Local and on the local folder.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BackfillRange } from '../../../lambda/contract/backfill.js';
import type { BackfillStore, SnapshotStore } from '../../../lambda/stores/types.js';
import type { EngineLogger } from '../../../lambda/sync/index.js';
import { planBackfill, runRange } from '../../../lambda/backfill/index.js';
import { generateCatalog, type GeneratedCatalog } from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { commitTicks } from '../../../testkit/sync-harness.js';
import {
  openTarget,
  settingsOf,
  TARGET_KINDS,
  withDeps,
  type BackfillTarget,
} from '../../../testkit/backfill-harness.js';

const LEASE_SECONDS = 6;
const LEASE_MS = LEASE_SECONDS * 1000;

let catalog: GeneratedCatalog;
let replica: CatalogReplica;
const targets: BackfillTarget[] = [];

beforeAll(async () => {
  catalog = generateCatalog({ commits: 30, seed: 4242, leavesPerCommit: [1, 4], deleteRatio: 0.1 });
  replica = await CatalogReplica.start({ catalog, pageSize: 5 });
});
afterAll(async () => {
  await replica.stop();
  for (const target of targets) target.close();
});

/** `target` with some of its methods replaced; the rest bound to it. */
function wrap<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(t, property) {
      if (property in overrides) return overrides[property as keyof T];
      const value = (t as Record<string | symbol, unknown>)[property];
      return typeof value === 'function' ? value.bind(t) : value;
    },
  });
}

interface Renewal {
  readonly leaseUntil: number;
  readonly failed: boolean;
  /** The range's state when the renewal was asked for. */
  readonly rangeDone: boolean;
  readonly rangeProgress: string | undefined;
  /** The plan's lease as stored right after it. */
  readonly stored: number | undefined;
}

/**
 * Runs the catalog's one range with the injected clock starting at `base`. `passLease`: a whole lease passes
 * during the range's first checkpoint write, and later leaf PUTs wait for the second renewal to settle. `failSecond`:
 * that renewal throws.
 */
async function runOneRange(
  kind: (typeof TARGET_KINDS)[number],
  { passLease, failSecond = false }: { passLease: boolean; failSecond?: boolean },
) {
  const target = await openTarget(kind);
  targets.push(target);
  const settings = settingsOf(replica.serviceIndexUrl);
  // The plan's own lease is over at once: what holds the follower off below is the range's renewals alone.
  // Its holder's renewals move it even once it has lapsed (as the whole lease passing below makes it).
  const holder = 'the-planner';
  const { plan, ranges } = await withDeps(target, settings, (deps) =>
    planBackfill(settings, deps, { rangeLeaves: 100_000, leaseSeconds: 0, holder }),
  );
  expect(ranges).toHaveLength(1);
  const range: BackfillRange = ranges[0]!;
  const { cursorName } = settings;
  const { backfillId } = plan;
  const base = Date.now();
  let clock = base;
  const renewals: Renewal[] = [];
  const checkpoints: string[] = [];
  const leafLeases: number[] = [];
  const warnings: string[] = [];
  let holding = false;
  let calls = 0;
  let second: Promise<void> | undefined;
  let release!: () => void;
  const secondSettled = new Promise<void>((resolve) => {
    release = resolve;
  });
  const store = target.stores.backfills;
  const backfills = wrap<BackfillStore>(store, {
    advanceRange: async (...args) => {
      const first = checkpoints.length === 0 && passLease;
      if (first) {
        clock += LEASE_MS;
        holding = true;
      }
      checkpoints.push(args[4].progress);
      const result = await store.advanceRange(...args);
      // The range worker asks for the renewal this write makes due in the microtasks right after it returns:
      // once they have run, the held leaves wait for that renewal to settle (or go on at once when none was asked
      // for, so that a worker that does not renew fails the assertions instead of hanging).
      if (first) setImmediate(() => void (second ?? Promise.resolve()).finally(release));
      return result;
    },
    renewLease: (name, id, leaseUntil, holder, now) => {
      const call = async () => {
        const state = await store.readRange(name, id, range.n);
        const failed = failSecond && renewals.length === 1;
        try {
          if (failed) throw new Error('injected: the table is throttled');
          await store.renewLease(name, id, leaseUntil, holder, now);
        } finally {
          renewals.push({
            leaseUntil,
            failed,
            rangeDone: state?.done ?? false,
            rangeProgress: state?.progress,
            stored: (await store.readPlan(name, id))?.leaseUntil,
          });
        }
      };
      const renewal = call();
      calls++;
      if (calls === 2) second = renewal.catch(() => {});
      return renewal;
    },
  });
  const snapshots = wrap<SnapshotStore>(target.stores.snapshots, {
    putLeaf: async (key, body, metadata) => {
      if (holding) await secondSettled;
      leafLeases.push((await store.readPlan(cursorName, backfillId))!.leaseUntil);
      return target.stores.snapshots.putLeaf(key, body, metadata);
    },
  });
  const logger: EngineLogger = { info() {}, error() {}, warn: (message) => warnings.push(message) };
  const outcome = await withDeps(
    target,
    settings,
    (deps) => runRange(settings, deps, range, { leaseSeconds: LEASE_SECONDS, now: () => clock, holder }),
    {
      backfills,
      snapshots,
      logger,
    },
  );
  const storedLease = (await store.readPlan(cursorName, backfillId))!.leaseUntil;
  return { target, outcome, base, renewals, checkpoints, leafLeases, warnings, storedLease, range };
}

describe('the plan lease inside a range', () => {
  it.each(TARGET_KINDS)(
    'a range longer than its lease renews it mid-range, once, as its checkpoint advances (%s)',
    async (kind) => {
      const { target, outcome, base, renewals, checkpoints, leafLeases, warnings, storedLease, range } =
        await runOneRange(kind, { passLease: true });
      expect(outcome).toMatchObject({ done: true, stoppedBy: 'caught-up' });
      expect(await target.verify(catalog, replica.origin, commitTicks(catalog, -1))).toEqual([]);
      // Start, mid-range (after the first checkpoint, a whole lease later), end: one renewal for a third of a lease,
      // however many checkpoints (coalesced: how many depends on the store's pace) and leaves the range wrote.
      expect(renewals.map((r) => r.leaseUntil)).toEqual([base + LEASE_MS, base + 2 * LEASE_MS, base + 2 * LEASE_MS]);
      expect(leafLeases.length).toBeGreaterThan(30);
      const mid = renewals[1]!;
      expect(mid).toMatchObject({ failed: false, rangeDone: false, stored: base + 2 * LEASE_MS });
      expect(mid.rangeProgress).toBe(checkpoints[0]);
      expect(mid.rangeProgress! < range.hi).toBe(true);
      // Read from the store as leaves were PUT: the start's lease first, then (leaves held until the renewal
      // settled) the renewed one, while the range still had leaves to store.
      expect(leafLeases[0]).toBe(base + LEASE_MS);
      expect(leafLeases.at(-1)).toBe(base + 2 * LEASE_MS);
      expect(leafLeases.filter((lease) => lease === base + 2 * LEASE_MS).length).toBeGreaterThan(1);
      expect(storedLease).toBe(base + 2 * LEASE_MS);
      expect(warnings).toEqual([]);
    },
  );

  it.each(TARGET_KINDS)(
    'while less than a third of the lease passes, only the range start and end renew it (%s)',
    async (kind) => {
      const { outcome, base, renewals, checkpoints, leafLeases } = await runOneRange(kind, { passLease: false });
      expect(outcome).toMatchObject({ done: true });
      expect(renewals.map((r) => [r.leaseUntil, r.rangeDone])).toEqual([
        [base + LEASE_MS, false],
        [base + LEASE_MS, true],
      ]);
      // Checkpoints were written, leaves stored: neither renewed the lease.
      expect(checkpoints.length).toBeGreaterThan(0);
      expect(leafLeases.length).toBeGreaterThan(30);
    },
  );

  it.each(TARGET_KINDS)(
    'a failed mid-range renewal is a warning, tried again at the next checkpoint; the range is done (%s)',
    async (kind) => {
      const { target, outcome, base, renewals, warnings, storedLease } = await runOneRange(kind, {
        passLease: true,
        failSecond: true,
      });
      expect(outcome).toMatchObject({ done: true, stoppedBy: 'caught-up' });
      expect(await target.verify(catalog, replica.origin, commitTicks(catalog, -1))).toEqual([]);
      expect(renewals.map((r) => [r.leaseUntil, r.failed, r.rangeDone])).toEqual([
        [base + LEASE_MS, false, false],
        [base + 2 * LEASE_MS, true, false],
        [base + 2 * LEASE_MS, false, false],
        [base + 2 * LEASE_MS, false, true],
      ]);
      expect(renewals[2]!.stored).toBe(base + 2 * LEASE_MS);
      expect(storedLease).toBe(base + 2 * LEASE_MS);
      expect(warnings).toEqual([
        'backfill lease renewal failed; the range goes on (the lease only holds the follower off)',
      ]);
    },
  );
});
