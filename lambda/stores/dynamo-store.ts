import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { formatTimestamp } from '../contract/time.js';
import type { RunSummary } from '../contract/run-summary.js';
import {
  sdkSendOptions,
  type ActivePlanClaim,
  type BackfillStore,
  type CompareAndSetResult,
  type ConsumerStateStore,
  type CursorState,
  type CursorStore,
  type CursorTarget,
  type LeaseRecord,
  type LegacyCursor,
  type StoredConsumer,
  type RangeProgress,
  type RangeWriteResult,
  type ReadOptions,
  type RunLogStore,
  type RunQuery,
} from './types.js';
import type { BackfillPlan, BackfillTotals, RangeState } from '../contract/backfill.js';
import { DynamoBackfillStore } from './dynamo-backfill.js';
import { compareRunsNewestFirst, runSecond } from './run-order.js';
import { isOwnWrite } from './own-write.js';
import { CURSOR_SK, cursorStateOf } from './dynamo-cursor-item.js';
import { DynamoConsumerState } from './dynamo-consumer-state.js';

export { CURSOR_SK, CursorItemError } from './dynamo-cursor-item.js';

/** Prefix of run-log sort keys: `run#` + kuuid id. */
export const RUN_SK_PREFIX = 'run#';
/** Runs read past the limit of `runs`, to see the whole second of the last run listed. */
const SAME_SECOND_SLACK = 10;

/**
 * Cursors and the run log in one DynamoDB table (`pk`, `sk`), exactly as the contract lays out.
 * Cursor writes are conditional on the value the run read; a failed condition hands back the stored
 * item (DynamoDB returns it with `ReturnValuesOnConditionCheckFailure`; where an emulator does not, it is
 * read again). When that item is the very write asked for (same cursor, same run id: an SDK retry of a write
 * whose answer was lost), the write is reported written (own-write.ts).
 */
export class DynamoStore implements CursorStore, RunLogStore, BackfillStore, ConsumerStateStore {
  private readonly documents: DynamoDBDocumentClient;
  private readonly backfills: DynamoBackfillStore;
  private readonly consumers: DynamoConsumerState;

  constructor(
    readonly table: string,
    client: DynamoDBClient = new DynamoDBClient({}),
  ) {
    this.documents = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
    this.backfills = new DynamoBackfillStore(this.documents, table);
    this.consumers = new DynamoConsumerState(this.documents, table);
  }

  async read(name: string, options?: ReadOptions): Promise<CursorState | undefined> {
    const { Item } = await this.documents.send(
      new GetCommand({ TableName: this.table, Key: { pk: name, sk: CURSOR_SK }, ConsistentRead: true }),
      sdkSendOptions(options),
    );
    return Item ? this.toState(name, Item) : undefined;
  }

  async compareAndSet(
    name: string,
    expected: CursorState | undefined,
    next: CursorTarget,
    options?: ReadOptions,
  ): Promise<CompareAndSetResult> {
    const values: Record<string, unknown> = {
      ':cursor': formatTimestamp(next.value),
      ':commitId': next.commitId,
      ':runId': next.runId,
      ':updatedAt': new Date().toISOString(),
    };
    if (expected) values[':expected'] = expected.stored;
    try {
      await this.documents.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: name, sk: CURSOR_SK },
          UpdateExpression: 'SET #cursor = :cursor, commitId = :commitId, runId = :runId, updatedAt = :updatedAt',
          ConditionExpression: expected ? '#cursor = :expected' : 'attribute_not_exists(pk)',
          ExpressionAttributeNames: { '#cursor': 'cursor' },
          ExpressionAttributeValues: values,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
        sdkSendOptions(options),
      );
      return { outcome: 'written' };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const old = error.Item ? unmarshallOld(error.Item) : undefined;
      const current = old ? this.toState(name, old) : await this.read(name, options);
      // A retry of our own write that had been applied (its answer lost to a timeout): written, not a lost race.
      if (isOwnWrite(current, { stored: values[':cursor'] as string, runId: next.runId }))
        return { outcome: 'written' };
      return { outcome: 'conflict', current };
    }
  }

  async appendRun(summary: RunSummary, expiresAt: number, options?: ReadOptions): Promise<void> {
    await this.documents.send(
      new PutCommand({
        TableName: this.table,
        Item: { ...summary, pk: summary.cursorName, sk: RUN_SK_PREFIX + summary.runId, expiresAt },
      }),
      sdkSendOptions(options),
    );
  }

  async listRuns(cursorName: string, query: RunQuery): Promise<RunSummary[]> {
    const names = { '#pk': 'pk', '#sk': 'sk' };
    const from = RUN_SK_PREFIX + (query.fromId ?? '');
    // '~' sorts after every kuuid character: the upper bound takes every id that begins with `toId`.
    const to = RUN_SK_PREFIX + (query.toId === undefined ? '~' : `${query.toId}~`);
    // Ids within one second sort at random, so the order within a second is decided on all of its
    // runs: the Query reads a few runs past the limit, and on while they share the last run's second.
    const wanted = query.limit + SAME_SECOND_SLACK;
    const runs: RunSummary[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.documents.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: { ':pk': cursorName, ':from': from, ':to': to },
          ScanIndexForward: false,
          Limit: Math.max(wanted - runs.length, SAME_SECOND_SLACK),
          ...(startKey ? { ExclusiveStartKey: startKey } : {}),
        }),
      );
      for (const item of page.Items ?? []) runs.push(toSummary(item));
      startKey = page.LastEvaluatedKey;
    } while (startKey && (runs.length < wanted || sharesSecond(runs, query.limit - 1, runs.length - 1)));
    const cut = query.limit - 1;
    const kept = runs.filter((_run, i) => i <= cut || sharesSecond(runs, cut, i));
    return kept.sort(compareRunsNewestFirst).slice(0, query.limit);
  }

  createPlan(plan: BackfillPlan): Promise<boolean> {
    return this.backfills.createPlan(plan);
  }

  readPlan(cursorName: string, backfillId: string): Promise<BackfillPlan | undefined> {
    return this.backfills.readPlan(cursorName, backfillId);
  }

  newestPlan(cursorName: string, options?: ReadOptions): Promise<BackfillPlan | undefined> {
    return this.backfills.newestPlan(cursorName, options);
  }

  renewLease(cursorName: string, backfillId: string, leaseUntil: number, holder?: string, now?: number): Promise<void> {
    return this.backfills.renewLease(cursorName, backfillId, leaseUntil, holder, now);
  }

  finishPlan(cursorName: string, backfillId: string, finishedAt: string, summary: RunSummary): Promise<BackfillPlan> {
    return this.backfills.finishPlan(cursorName, backfillId, finishedAt, summary);
  }

  readRange(cursorName: string, backfillId: string, n: number): Promise<RangeState | undefined> {
    return this.backfills.readRange(cursorName, backfillId, n);
  }

  advanceRange(
    cursorName: string,
    backfillId: string,
    n: number,
    expected: string | undefined,
    next: RangeProgress,
  ): Promise<RangeWriteResult> {
    return this.backfills.advanceRange(cursorName, backfillId, n, expected, next);
  }

  markRangeDone(
    cursorName: string,
    backfillId: string,
    n: number,
    final: { progress?: string; progressCommitId?: string; totals: BackfillTotals },
  ): Promise<RangeState> {
    return this.backfills.markRangeDone(cursorName, backfillId, n, final);
  }

  listRanges(cursorName: string, backfillId: string): Promise<RangeState[]> {
    return this.backfills.listRanges(cursorName, backfillId);
  }

  claimActive(
    cursorName: string,
    backfillId: string,
    replacing: string | undefined,
    claimedAt: number,
    holder?: string,
  ): Promise<boolean> {
    return this.backfills.claimActive(cursorName, backfillId, replacing, claimedAt, holder);
  }

  readActive(cursorName: string): Promise<ActivePlanClaim | undefined> {
    return this.backfills.readActive(cursorName);
  }

  releaseActive(cursorName: string, backfillId: string): Promise<void> {
    return this.backfills.releaseActive(cursorName, backfillId);
  }

  setLease(
    cursorName: string,
    backfillId: string,
    leaseUntil: number,
    expected: number | undefined,
    holder?: string,
  ): Promise<boolean> {
    return this.backfills.setLease(cursorName, backfillId, leaseUntil, expected, holder);
  }

  abandonPlan(cursorName: string, backfillId: string, abandonedAt: string): Promise<boolean> {
    return this.backfills.abandonPlan(cursorName, backfillId, abandonedAt);
  }

  readLease(key: string, options?: ReadOptions): Promise<LeaseRecord | undefined> {
    return this.consumers.readLease(key, options);
  }

  swapLease(key: string, expected: LeaseRecord | undefined, next: LeaseRecord): Promise<boolean> {
    return this.consumers.swapLease(key, expected, next);
  }

  listConsumers(keyPrefix: string): Promise<StoredConsumer[]> {
    return this.consumers.listConsumers(keyPrefix);
  }

  readLegacy(name: string): Promise<LegacyCursor | undefined> {
    return this.consumers.readLegacy(name);
  }

  adoptLegacy(name: string, by: string): Promise<boolean> {
    return this.consumers.adoptLegacy(name, by);
  }

  private toState(name: string, item: Record<string, unknown>): CursorState {
    return cursorStateOf(this.table, name, item);
  }
}

function unmarshallOld(item: Record<string, { S?: string }>): Record<string, unknown> {
  const plain: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(item)) if (value && typeof value.S === 'string') plain[key] = value.S;
  return plain;
}

function toSummary(item: Record<string, unknown>): RunSummary {
  const { pk: _pk, sk: _sk, expiresAt: _expiresAt, ...summary } = item;
  return summary as unknown as RunSummary;
}

/** True when runs `i` and `j` both exist and started in the same second. */
function sharesSecond(runs: readonly RunSummary[], i: number, j: number): boolean {
  const a = runs[i];
  const b = runs[j];
  return a !== undefined && b !== undefined && runSecond(a.runId) === runSecond(b.runId);
}
