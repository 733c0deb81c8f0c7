import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import {
  BACKFILL_ACTIVE_SK,
  BACKFILL_SK_PREFIX,
  backfillSortKey,
  BackfillStatus,
  rangeSortKey,
  type BackfillPlan,
  type BackfillTotals,
  type RangeState,
} from '../contract/backfill.js';
import type { RunSummary } from '../contract/run-summary.js';
import { isOwnWrite } from './own-write.js';
import {
  sdkSendOptions,
  type ActivePlanClaim,
  type BackfillStore,
  type RangeFinal,
  type RangeProgress,
  type RangeWriteResult,
  type ReadOptions,
} from './types.js';

/** Every attribute a backfill expression names, aliased (several are DynamoDB reserved words). */
const NAMES = {
  '#status': 'status',
  '#leaseUntil': 'leaseUntil',
  '#finishedAt': 'finishedAt',
  '#summary': 'summary',
  '#n': 'n',
  '#done': 'done',
  '#progress': 'progress',
  '#progressCommitId': 'progressCommitId',
  '#commits': 'commits',
  '#leaves': 'leaves',
  '#deletes': 'deletes',
  '#quarantined': 'quarantined',
  '#bytes': 'bytes',
  '#updatedAt': 'updatedAt',
  '#runId': 'runId',
  '#backfillId': 'backfillId',
  '#claimedAt': 'claimedAt',
  '#leaseHolder': 'leaseHolder',
  '#abandonedAt': 'abandonedAt',
} as const;
const SET_TOTALS =
  '#commits = :commits, #leaves = :leaves, #deletes = :deletes, #quarantined = :quarantined, #bytes = :bytes';

/**
 * Backfill plans and range states in the cursor table: the plan item (`sk` = `backfill#<id>`, attributes named
 * like {@link BackfillPlan}'s fields) and one item per range (`sk` = `backfill#<id>#range#<n>`, attributes named
 * like {@link RangeState}'s fields, plus the `runId` of the last write). Every write that matters is conditional.
 */
export class DynamoBackfillStore implements BackfillStore {
  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async createPlan(plan: BackfillPlan): Promise<boolean> {
    const item = { ...plan, pk: plan.cursorName, sk: backfillSortKey(plan.backfillId) };
    return conditional(
      this.documents.send(
        new PutCommand({ TableName: this.table, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }),
      ),
    );
  }

  async readPlan(cursorName: string, backfillId: string, options?: ReadOptions): Promise<BackfillPlan | undefined> {
    const item = await this.get(cursorName, backfillSortKey(backfillId), options);
    return item === undefined ? undefined : (strip(item) as unknown as BackfillPlan);
  }

  async newestPlan(cursorName: string, options?: ReadOptions): Promise<BackfillPlan | undefined> {
    // The greatest backfill sort key is the newest plan's own item or one of its ranges (`backfill#<id>#range#<n>`).
    const { Items } = await this.documents.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': cursorName, ':prefix': BACKFILL_SK_PREFIX },
        ScanIndexForward: false,
        Limit: 1,
        ConsistentRead: true,
      }),
      sdkSendOptions(options),
    );
    const sk = Items?.[0]?.sk;
    if (typeof sk !== 'string') return undefined;
    return this.readPlan(cursorName, sk.slice(BACKFILL_SK_PREFIX.length).split('#')[0]!, options);
  }

  async renewLease(
    cursorName: string,
    backfillId: string,
    leaseUntil: number,
    holder?: string,
    now = Date.now(),
  ): Promise<void> {
    // Still its holder's (a lease given back has none); without a holder, a lease still live.
    const held = holder === undefined ? '#leaseUntil > :now' : '#leaseHolder = :holder';
    await conditional(
      this.update(
        cursorName,
        backfillSortKey(backfillId),
        'SET #leaseUntil = :lease',
        `#status = :running AND #leaseUntil < :lease AND ${held}`,
        {
          ':lease': leaseUntil,
          ':running': BackfillStatus.running,
          ...(holder === undefined ? { ':now': now } : { ':holder': holder }),
        },
      ),
    );
  }

  async finishPlan(
    cursorName: string,
    backfillId: string,
    finishedAt: string,
    summary: RunSummary,
  ): Promise<BackfillPlan> {
    await conditional(
      this.update(
        cursorName,
        backfillSortKey(backfillId),
        'SET #status = :finished, #finishedAt = :finishedAt, #summary = :summary',
        '#status = :running',
        {
          ':finished': BackfillStatus.finished,
          ':running': BackfillStatus.running,
          ':finishedAt': finishedAt,
          ':summary': summary,
        },
      ),
    );
    const plan = await this.readPlan(cursorName, backfillId);
    if (plan === undefined)
      throw new Error(`DynamoDB table ${this.table}: backfill ${backfillId} of cursor ${cursorName} vanished`);
    return plan;
  }

  async readRange(cursorName: string, backfillId: string, n: number): Promise<RangeState | undefined> {
    const item = await this.get(cursorName, rangeSortKey(backfillId, n));
    return item === undefined ? undefined : toRange(item);
  }

  async advanceRange(
    cursorName: string,
    backfillId: string,
    n: number,
    expected: string | undefined,
    next: RangeProgress,
  ): Promise<RangeWriteResult> {
    const written = await conditional(
      this.update(
        cursorName,
        rangeSortKey(backfillId, n),
        `SET #n = :n, #done = if_not_exists(#done, :false), #progress = :progress, #progressCommitId = :commitId, ${SET_TOTALS}, #updatedAt = :now, #runId = :runId`,
        // A done range's totals never change again.
        `${expected === undefined ? 'attribute_not_exists(#progress)' : '#progress = :expected'} AND (attribute_not_exists(#done) OR #done = :false)`,
        {
          ':n': n,
          ':false': false,
          ':progress': next.progress,
          ':commitId': next.progressCommitId,
          ...totalValues(next.totals),
          ':now': new Date().toISOString(),
          ':runId': next.runId,
          ...(expected === undefined ? {} : { ':expected': expected }),
        },
      ),
    );
    if (written) return { outcome: 'written' };
    const item = await this.get(cursorName, rangeSortKey(backfillId, n));
    // A retry of our own write that had been applied (its answer lost to a timeout): written, not a lost race.
    if (
      item !== undefined &&
      item.done !== true &&
      isOwnWrite(
        { stored: item.progress as string | undefined, runId: item.runId as string | undefined },
        { stored: next.progress, runId: next.runId },
      )
    ) {
      return { outcome: 'written' };
    }
    return { outcome: 'conflict', current: item === undefined ? undefined : toRange(item) };
  }

  async markRangeDone(cursorName: string, backfillId: string, n: number, final: RangeFinal): Promise<RangeState> {
    const values = {
      ':n': n,
      ':true': true,
      ':false': false,
      ...totalValues(final.totals),
      ':now': new Date().toISOString(),
    };
    const notDone = '(attribute_not_exists(#done) OR #done = :false)';
    const set = `SET #n = :n, #done = :true, ${SET_TOTALS}, #updatedAt = :now`;
    // The final progress, unless a stored one is newer (it never moves back); then done alone.
    const withProgress =
      final.progress !== undefined &&
      (await conditional(
        this.update(
          cursorName,
          rangeSortKey(backfillId, n),
          `${set}, #progress = :progress, #progressCommitId = :commitId`,
          `${notDone} AND (attribute_not_exists(#progress) OR #progress <= :progress)`,
          {
            ...values,
            ':progress': final.progress,
            ':commitId': final.progressCommitId ?? '',
          },
        ),
      ));
    if (!withProgress) await conditional(this.update(cursorName, rangeSortKey(backfillId, n), set, notDone, values));
    const state = await this.readRange(cursorName, backfillId, n);
    if (state === undefined)
      throw new Error(`DynamoDB table ${this.table}: range ${n} of backfill ${backfillId} vanished`);
    return state;
  }

  async listRanges(cursorName: string, backfillId: string): Promise<RangeState[]> {
    const states: RangeState[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.documents.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':pk': cursorName, ':prefix': `${backfillSortKey(backfillId)}#range#` },
          ConsistentRead: true,
          ...(startKey ? { ExclusiveStartKey: startKey } : {}),
        }),
      );
      for (const item of page.Items ?? []) states.push(toRange(item));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return states.sort((a, b) => a.n - b.n);
  }

  async claimActive(
    cursorName: string,
    backfillId: string,
    replacing: string | undefined,
    claimedAt: number,
    holder?: string,
  ): Promise<boolean> {
    return conditional(
      this.update(
        cursorName,
        BACKFILL_ACTIVE_SK,
        holder === undefined
          ? 'SET #backfillId = :id, #claimedAt = :at REMOVE #leaseHolder'
          : 'SET #backfillId = :id, #claimedAt = :at, #leaseHolder = :holder',
        replacing === undefined ? 'attribute_not_exists(#backfillId)' : '#backfillId = :replacing',
        {
          ':id': backfillId,
          ':at': claimedAt,
          ...(replacing === undefined ? {} : { ':replacing': replacing }),
          ...(holder === undefined ? {} : { ':holder': holder }),
        },
      ),
    );
  }

  async readActive(cursorName: string): Promise<ActivePlanClaim | undefined> {
    const item = await this.get(cursorName, BACKFILL_ACTIVE_SK);
    if (typeof item?.backfillId !== 'string') return undefined;
    return {
      backfillId: item.backfillId,
      claimedAt: Number(item.claimedAt ?? 0),
      ...(typeof item.leaseHolder === 'string' ? { holder: item.leaseHolder } : {}),
    };
  }

  async releaseActive(cursorName: string, backfillId: string): Promise<void> {
    await conditional(
      this.update(cursorName, BACKFILL_ACTIVE_SK, 'REMOVE #backfillId, #claimedAt, #leaseHolder', '#backfillId = :id', {
        ':id': backfillId,
      }),
    );
  }

  async setLease(
    cursorName: string,
    backfillId: string,
    leaseUntil: number,
    expected: number | undefined,
    holder?: string,
  ): Promise<boolean> {
    return conditional(
      this.update(
        cursorName,
        backfillSortKey(backfillId),
        holder === undefined
          ? 'SET #leaseUntil = :lease REMOVE #leaseHolder'
          : 'SET #leaseUntil = :lease, #leaseHolder = :holder',
        `#status = :running${expected === undefined ? '' : ' AND #leaseUntil = :expected'}`,
        {
          ':lease': leaseUntil,
          ':running': BackfillStatus.running,
          ...(expected === undefined ? {} : { ':expected': expected }),
          ...(holder === undefined ? {} : { ':holder': holder }),
        },
      ),
    );
  }

  async abandonPlan(cursorName: string, backfillId: string, abandonedAt: string): Promise<boolean> {
    return conditional(
      this.update(
        cursorName,
        backfillSortKey(backfillId),
        'SET #status = :abandoned, #abandonedAt = :at',
        '#status = :running',
        {
          ':abandoned': BackfillStatus.abandoned,
          ':running': BackfillStatus.running,
          ':at': abandonedAt,
        },
      ),
    );
  }

  private async get(pk: string, sk: string, options?: ReadOptions): Promise<Record<string, unknown> | undefined> {
    const { Item } = await this.documents.send(
      new GetCommand({ TableName: this.table, Key: { pk, sk }, ConsistentRead: true }),
      sdkSendOptions(options),
    );
    return Item;
  }

  private async update(
    pk: string,
    sk: string,
    expression: string,
    condition: string,
    values: Record<string, unknown>,
  ): Promise<unknown> {
    const used = `${expression} ${condition}`;
    const names = Object.fromEntries(Object.entries(NAMES).filter(([alias]) => new RegExp(`${alias}\\b`).test(used)));
    return this.documents.send(
      new UpdateCommand({
        TableName: this.table,
        Key: { pk, sk },
        UpdateExpression: expression,
        ConditionExpression: condition,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    );
  }
}

/** True when the write happened, false when its condition failed. */
async function conditional(write: Promise<unknown>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

function totalValues(totals: BackfillTotals): Record<string, number> {
  return {
    ':commits': totals.commits,
    ':leaves': totals.leaves,
    ':deletes': totals.deletes,
    ':quarantined': totals.quarantined,
    ':bytes': totals.bytes,
  };
}

function strip(item: Record<string, unknown>): Record<string, unknown> {
  const { pk: _pk, sk: _sk, ...rest } = item;
  return rest;
}

function toRange(item: Record<string, unknown>): RangeState {
  const { runId: _runId, ...state } = strip(item);
  return {
    done: false,
    commits: 0,
    leaves: 0,
    deletes: 0,
    quarantined: 0,
    bytes: 0,
    ...state,
  } as unknown as RangeState;
}
