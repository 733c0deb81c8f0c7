/**
 * Faults a {@link CatalogReplica} injects on demand: each is armed for requests whose path
 * matches, and counts down, so a test says exactly how many requests misbehave.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import { matchesPath, type PathMatch } from './path-match.js';
import type { ServedDocument } from './replica-source.js';

/** What happens to a matching request instead of the normal answer. */
export type Fault =
  /** Answer with this status (and headers), e.g. 503, or 429 with `Retry-After`. */
  | { kind: 'status'; status: number; headers: OutgoingHttpHeaders }
  /** Destroy the connection (TCP reset) before answering. */
  | { kind: 'reset' }
  /** Send the full `Content-Length` but only half the body, then close. */
  | { kind: 'truncate' }
  /** Send the headers and half the body, then nothing more until the client gives up. */
  | { kind: 'stall' }
  /** Send the headers, then one byte of the body every `intervalMs`: never silent long enough for a body timeout. */
  | { kind: 'trickle'; intervalMs: number }
  /** Serve this document instead (malformed, wrong types, huge...). */
  | { kind: 'override'; document: ServedDocument; status: number; headers: OutgoingHttpHeaders }
  /** Serve the page as it was `commitsBack` commits earlier. */
  | { kind: 'stale'; commitsBack: number }
  /** Serve a small gzip body that inflates to far more than any sane limit. */
  | { kind: 'gzip-bomb' };

interface Armed {
  match: PathMatch;
  remaining: number;
  fault: Fault;
}

/** Armed faults, first armed first served. */
export class FaultList {
  private armed: Armed[] = [];

  /**
   * Arms `fault` for the next `times` requests matching `match` (`Infinity` for all of them).
   *
   * @throws when `times` is not a positive integer or `Infinity`.
   */
  add(match: PathMatch, times: number, fault: Fault): void {
    if (!(times === Number.POSITIVE_INFINITY || (Number.isInteger(times) && times >= 1))) {
      throw new Error(`times must be a positive integer or Infinity, got ${times}`);
    }
    this.armed.push({ match, remaining: times, fault });
  }

  /** The first armed fault for `path`, counted down; undefined when none applies. */
  take(path: string): Fault | undefined {
    const armed = this.armed.find((a) => a.remaining > 0 && matchesPath(a.match, path));
    if (!armed) return undefined;
    armed.remaining -= 1;
    if (armed.remaining === 0) this.armed = this.armed.filter((a) => a !== armed);
    return armed.fault;
  }

  /** Requests still to be spoiled by faults matching `path` (Infinity if any is unbounded). */
  pending(path?: string): number {
    return this.armed
      .filter((a) => path === undefined || matchesPath(a.match, path))
      .reduce((sum, a) => sum + a.remaining, 0);
  }

  clear(): void {
    this.armed = [];
  }
}
