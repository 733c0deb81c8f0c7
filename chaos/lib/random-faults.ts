/**
 * Probabilistic faults on a {@link CatalogReplica}: each path (service index, catalog index, page, leaf) is
 * judged once, at its first request: with probability `rate` it gets a plan of 1 to `maxPerPath` faults,
 * each of a random kind, served to its next requests in order; then it is served normally. With a client
 * that retries more often than `maxPerPath`, every document is eventually served whole.
 *
 * Built only on the replica's public fault API: one armed fault per kind, unbounded, whose path
 * predicate says yes only when that path's next planned fault is of its kind (the replica asks the
 * predicates in order and serves the first that says yes, so exactly one planned fault is consumed per
 * request). Counts every fault actually served.
 */
import type { CatalogReplica, Prng } from '../../testkit/index.js';

/** The kinds of fault. */
export const RANDOM_FAULT_KINDS = ['500', '502', '503', '504', '429', 'reset', 'truncate', 'stall'] as const;
export type RandomFaultKind = (typeof RANDOM_FAULT_KINDS)[number];

export interface RandomFaultOptions {
  /** Share of paths that misbehave; default 0.3. */
  rate?: number;
  /** Most faults per path; default 3. */
  maxPerPath?: number;
  kinds?: readonly RandomFaultKind[];
  /** `Retry-After` of the 429s, in seconds; default 1. */
  retryAfterSeconds?: number;
  prng: Prng;
}

export class RandomFaults {
  /** Faults served, by kind. */
  readonly served: Record<RandomFaultKind, number> = Object.fromEntries(
    RANDOM_FAULT_KINDS.map((k) => [k, 0]),
  ) as Record<RandomFaultKind, number>;
  /** Paths judged, and how many of them were given faults. */
  pathsSeen = 0;
  pathsFaulty = 0;
  private readonly plans = new Map<string, RandomFaultKind[]>();
  private enabled = true;
  private readonly rate: number;
  private readonly maxPerPath: number;
  private readonly kinds: readonly RandomFaultKind[];
  private readonly prng: Prng;

  constructor(replica: CatalogReplica, options: RandomFaultOptions) {
    this.rate = options.rate ?? 0.3;
    this.maxPerPath = options.maxPerPath ?? 3;
    this.kinds = options.kinds ?? RANDOM_FAULT_KINDS;
    this.prng = options.prng;
    const retryAfter = String(options.retryAfterSeconds ?? 1);
    for (const kind of this.kinds) {
      const match = (path: string): boolean => this.take(path, kind);
      switch (kind) {
        case '429':
          replica.failWith(match, 429, Number.POSITIVE_INFINITY, { 'Retry-After': retryAfter });
          break;
        case 'reset':
          replica.resetConnection(match, Number.POSITIVE_INFINITY);
          break;
        case 'truncate':
          replica.truncateBody(match, Number.POSITIVE_INFINITY);
          break;
        case 'stall':
          replica.stallBody(match, Number.POSITIVE_INFINITY);
          break;
        default:
          replica.failWith(match, Number(kind), Number.POSITIVE_INFINITY);
      }
    }
  }

  /** Faults served in all. */
  get total(): number {
    return Object.values(this.served).reduce((a, b) => a + b, 0);
  }

  /** Stops injecting (planned faults not yet served are dropped). */
  disable(): void {
    this.enabled = false;
  }

  private take(path: string, kind: RandomFaultKind): boolean {
    if (!this.enabled) return false;
    let plan = this.plans.get(path);
    if (!plan) {
      plan = [];
      this.pathsSeen++;
      if (this.prng.chance(this.rate)) {
        this.pathsFaulty++;
        const count = this.prng.int(1, this.maxPerPath);
        for (let i = 0; i < count; i++) plan.push(this.prng.pick(this.kinds));
      }
      this.plans.set(path, plan);
    }
    if (plan[0] !== kind) return false;
    plan.shift();
    this.served[kind]++;
    return true;
  }
}
