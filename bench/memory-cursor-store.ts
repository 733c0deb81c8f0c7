/**
 * An in-memory CursorStore (and RunLogStore) with a configurable latency per call, standing in for DynamoDB
 * when the benchmark should not depend on an emulator. It keeps the conditional-write semantics of
 * DynamoStore: a write succeeds only when the stored value is still the one the caller read.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { formatTimestamp, type RunSummary } from '../lambda/contract/index.js';
import type {
  CompareAndSetResult,
  CursorState,
  CursorStore,
  CursorTarget,
  RunLogStore,
  RunQuery,
} from '../lambda/stores/index.js';

export class MemoryCursorStore implements CursorStore, RunLogStore {
  private readonly cursors = new Map<string, CursorState>();
  private readonly runs: RunSummary[] = [];
  /** Calls made: reads, conditional writes, run-log appends. */
  readonly calls = { reads: 0, writes: 0, conflicts: 0, runs: 0 };

  constructor(private readonly latencyMs: number) {}

  async read(name: string): Promise<CursorState | undefined> {
    await this.wait();
    this.calls.reads++;
    return this.cursors.get(name);
  }

  async compareAndSet(
    name: string,
    expected: CursorState | undefined,
    next: CursorTarget,
  ): Promise<CompareAndSetResult> {
    await this.wait();
    this.calls.writes++;
    const current = this.cursors.get(name);
    if (current?.stored !== expected?.stored) {
      this.calls.conflicts++;
      return { outcome: 'conflict', current };
    }
    this.cursors.set(name, {
      value: next.value,
      stored: formatTimestamp(next.value),
      commitId: next.commitId,
      runId: next.runId,
      updatedAt: new Date().toISOString(),
    });
    return { outcome: 'written' };
  }

  async appendRun(summary: RunSummary): Promise<void> {
    await this.wait();
    this.calls.runs++;
    this.runs.push(summary);
  }

  async listRuns(cursorName: string, query: RunQuery): Promise<RunSummary[]> {
    await this.wait();
    return this.runs
      .filter((run) => run.cursorName === cursorName)
      .reverse()
      .slice(0, query.limit);
  }

  private async wait(): Promise<void> {
    if (this.latencyMs > 0) await delay(this.latencyMs);
  }
}
