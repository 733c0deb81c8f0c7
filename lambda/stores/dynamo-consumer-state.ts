import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, ScanCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { LEASE_SK } from '../contract/consumer-keys.js';
import { CURSOR_SK, cursorStateOf, CursorItemError } from './dynamo-cursor-item.js';
import {
  sdkSendOptions,
  type ConsumerStateStore,
  type CursorState,
  type LeaseRecord,
  type LegacyCursor,
  type ReadOptions,
  type StoredConsumer,
} from './types.js';

/**
 * Named consumers' leases and listing in the cursor table (contract.md): a consumer's lease is the item beside its
 * cursor (`pk` = the consumer's key, `sk` = `lease`; `leaseHolder`, `leaseUntil` epoch ms, `updatedAt`), set only
 * by a compare-and-set on the lease seen. A cursor from before consumers were keyed by mirror is the item `pk` =
 * name, `sk` = `cursor`; `adoptedBy` names the consumer key that took it over.
 */
export class DynamoConsumerState implements ConsumerStateStore {
  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async readLease(key: string, options?: ReadOptions): Promise<LeaseRecord | undefined> {
    const { Item } = await this.documents.send(
      new GetCommand({ TableName: this.table, Key: { pk: key, sk: LEASE_SK }, ConsistentRead: true }),
      sdkSendOptions(options),
    );
    return Item === undefined ? undefined : this.leaseOf(key, Item);
  }

  async swapLease(key: string, expected: LeaseRecord | undefined, next: LeaseRecord): Promise<boolean> {
    try {
      await this.documents.send(
        new PutCommand({
          TableName: this.table,
          Item: {
            pk: key,
            sk: LEASE_SK,
            leaseHolder: next.holder,
            leaseUntil: next.until,
            updatedAt: new Date().toISOString(),
          },
          ConditionExpression:
            expected === undefined ? 'attribute_not_exists(pk)' : 'leaseHolder = :holder AND leaseUntil = :until',
          ...(expected === undefined
            ? {}
            : { ExpressionAttributeValues: { ':holder': expected.holder, ':until': expected.until } }),
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  async listConsumers(keyPrefix: string): Promise<StoredConsumer[]> {
    const found = new Map<string, { cursor?: CursorState; lease?: LeaseRecord }>();
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.documents.send(
        new ScanCommand({
          TableName: this.table,
          FilterExpression: 'begins_with(pk, :prefix) AND (sk = :cursor OR sk = :lease)',
          ExpressionAttributeValues: { ':prefix': keyPrefix, ':cursor': CURSOR_SK, ':lease': LEASE_SK },
          ConsistentRead: true,
          ...(startKey ? { ExclusiveStartKey: startKey } : {}),
        }),
      );
      for (const item of page.Items ?? []) {
        const key = String(item.pk);
        const entry = found.get(key) ?? {};
        if (item.sk === CURSOR_SK) entry.cursor = cursorStateOf(this.table, key, item);
        else entry.lease = this.leaseOf(key, item);
        found.set(key, entry);
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return [...found].sort(([a], [b]) => (a < b ? -1 : 1)).map(([key, entry]) => ({ key, ...entry }));
  }

  async readLegacy(name: string): Promise<LegacyCursor | undefined> {
    const { Item } = await this.documents.send(
      new GetCommand({ TableName: this.table, Key: { pk: name, sk: CURSOR_SK }, ConsistentRead: true }),
    );
    if (Item === undefined) return undefined;
    return {
      state: cursorStateOf(this.table, name, Item),
      ...(typeof Item.adoptedBy === 'string' ? { adoptedBy: Item.adoptedBy } : {}),
    };
  }

  async adoptLegacy(name: string, by: string): Promise<boolean> {
    try {
      await this.documents.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: name, sk: CURSOR_SK },
          UpdateExpression: 'SET adoptedBy = :by',
          ConditionExpression: 'attribute_exists(#cursor) AND (attribute_not_exists(adoptedBy) OR adoptedBy = :by)',
          ExpressionAttributeNames: { '#cursor': 'cursor' },
          ExpressionAttributeValues: { ':by': by },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  private leaseOf(key: string, item: Record<string, unknown>): LeaseRecord {
    if (typeof item.leaseHolder !== 'string' || typeof item.leaseUntil !== 'number') {
      throw new CursorItemError(this.table, key, 'its lease item has no "leaseHolder" string or "leaseUntil" number');
    }
    return { holder: item.leaseHolder, until: item.leaseUntil };
  }
}
