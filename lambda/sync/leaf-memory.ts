/**
 * The bytes of leaf bodies in flight, bounded (issue 30): a leaf slot bounds how many leaves are fetched and stored
 * at once, this bounds what they hold. Each leaf takes a lease; the HTTP client grows it to the body's declared
 * length as soon as the headers arrive (else to the bytes received so far), and to the raw body plus its decoded
 * copy when it is compressed; once the leaf is parsed the lease shrinks to the body the PUT sends, and the PUT's
 * end releases it. A body the budget cannot hold now is dropped before it is read on, and its leaf waits, holding
 * nothing, until its bytes fit (in the order leaves asked): no leaf waits while holding memory another needs, so
 * the budget never deadlocks. A body larger than the whole budget can never be held: an item error
 * (`LeafMemoryError`, quarantinable). The budget is one per process (contract/leaf-memory.ts says how large), shared
 * by every run of it (a warm Lambda's, the CLI's).
 */
import {
  BodyDeferredError,
  FetchAbortedError,
  type BodyHold,
  type BodyMemory,
  type CatalogClient,
  type PageItem,
  type RequestBounds,
} from '../catalog/index.js';
import type { LeafMemoryBudget } from '../contract/leaf-memory.js';

/** One leaf's hold on the budget. */
export class MemoryLease implements BodyMemory {
  /** Bytes held now. */
  held: number;
  /** Writes of the body still in flight (a hedged PUT's two), and whether the leaf gave the lease back meanwhile. */
  private writing = 0;
  private released = false;

  constructor(
    private readonly memory: LeafMemory,
    bytes: number,
  ) {
    this.held = bytes;
  }

  get budget(): LeafMemoryBudget {
    return this.memory.budget;
  }

  /** Holds `bytes` in all, without waiting: at once when they fit beside the others' (see {@link BodyMemory.hold}). */
  hold(bytes: number): BodyHold {
    if (bytes <= this.held) return 'held';
    if (bytes > this.memory.budget.bytes) return 'never';
    if (!this.memory.take(bytes - this.held)) return 'later';
    this.held = bytes;
    return 'held';
  }

  /** Holds only `bytes` from now on (the parsed leaf's body, once its raw copy is dropped). */
  shrink(bytes: number): void {
    if (bytes >= this.held) return;
    const freed = this.held - bytes;
    this.held = bytes;
    this.memory.give(freed);
  }

  /**
   * Keeps the bytes held until `write` settles, even past {@link release}: a hedged PUT's other write, still sending
   * the body after the first one succeeded, holds it as long.
   */
  during<T>(write: Promise<T>): Promise<T> {
    this.writing++;
    return write.finally(() => {
      if (--this.writing === 0 && this.released) this.shrink(0);
    });
  }

  /** Gives every byte back (the leaf is stored, failed or aborted), once no write of its body is in flight. Twice is once. */
  release(): void {
    this.released = true;
    if (this.writing === 0) this.shrink(0);
  }
}

interface Waiter {
  readonly bytes: number;
  readonly grant: () => void;
}

/** A process's budget for leaf bodies in flight (see the module). */
export class LeafMemory {
  private used = 0;
  /** The most bytes held at once so far. */
  peak = 0;
  private readonly waiting: Waiter[] = [];

  constructor(readonly budget: LeafMemoryBudget) {}

  /** Bytes held now. */
  get held(): number {
    return this.used;
  }

  /** A lease of `bytes`, when they fit now and no leaf waits before it; undefined otherwise. */
  tryLease(bytes: number): MemoryLease | undefined {
    if (this.waiting.length > 0 || !this.take(bytes)) return undefined;
    return new MemoryLease(this, bytes);
  }

  /**
   * A lease of `bytes`, once they fit, after the leaves that asked before it. Rejects with `signal`'s reason when
   * it aborts first.
   *
   * @throws RangeError when `bytes` is more than the whole budget (the caller says which leaf cannot fit).
   */
  lease(bytes: number, signal?: AbortSignal): Promise<MemoryLease> {
    if (bytes > this.budget.bytes)
      return Promise.reject(new RangeError(`${bytes} bytes can never fit a budget of ${this.budget.bytes}`));
    const now = this.tryLease(bytes);
    if (now !== undefined) return Promise.resolve(now);
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<MemoryLease>((resolve, reject) => {
      const onAbort = (): void => {
        const at = this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(signal!.reason);
        // The leaf behind it may fit now.
        this.wake();
      };
      const waiter: Waiter = {
        bytes,
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(new MemoryLease(this, bytes));
        },
      };
      this.waiting.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Takes `bytes` when they fit (a lease growing, or a new one). */
  take(bytes: number): boolean {
    if (this.used + bytes > this.budget.bytes) return false;
    this.used += bytes;
    if (this.used > this.peak) this.peak = this.used;
    return true;
  }

  /** Gives `bytes` back, and grants the waiting leases that fit now, in order. */
  give(bytes: number): void {
    this.used -= bytes;
    this.wake();
  }

  private wake(): void {
    while (this.waiting.length > 0 && this.used + this.waiting[0]!.bytes <= this.budget.bytes) {
      const waiter = this.waiting.shift()!;
      this.used += waiter.bytes;
      if (this.used > this.peak) this.peak = this.used;
      waiter.grant();
    }
  }
}

/**
 * Fetches `item`'s body within `memory`: the lease grows as the body's size becomes known; a body the budget
 * cannot hold now is dropped, and fetched again once its bytes are leased (after the leaves that asked before it).
 * Returns the body and the lease holding it (shrunk to the body), which the caller releases once the body is stored.
 *
 * @throws {@link LeafMemoryError} when the body can never fit; {@link FetchAbortedError} when `bounds.signal` stops
 *   the wait for memory; what `getLeaf` throws.
 */
export async function fetchWithin(
  catalog: CatalogClient,
  memory: LeafMemory,
  item: PageItem,
  bounds: RequestBounds,
): Promise<{ body: Buffer; lease: MemoryLease }> {
  let need = 0;
  for (;;) {
    let lease: MemoryLease;
    try {
      lease = memory.tryLease(need) ?? (await memory.lease(need, bounds.signal));
    } catch (cause) {
      if (bounds.signal?.aborted) throw new FetchAbortedError(item.url, 'while waiting for memory', { cause });
      // A deferred body asks for at most the budget (more is a LeafMemoryError at once): a refusal here is a bug.
      throw cause;
    }
    try {
      // Only the body is kept: the parsed document is dropped here, before the PUT.
      const { body } = await catalog.getLeaf(item, { ...bounds, memory: lease });
      lease.shrink(body.length);
      return { body, lease };
    } catch (error) {
      lease.release();
      if (!(error instanceof BodyDeferredError)) throw error;
      // The bytes only grow: a body whose size changed between two fetches is asked for again, at most up to the budget.
      need = Math.max(need, error.bytes);
    }
  }
}
