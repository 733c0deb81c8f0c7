/**
 * AWS SDK clients for the emulators, and the table and buckets tests create on them.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { setTimeout as delay } from 'node:timers/promises';

/** AWS SDK clients configured for the emulators. */
export interface EmulatorClients {
  dynamo: DynamoDBClient;
  /** Document client over `dynamo` (plain JavaScript values). */
  documents: DynamoDBDocumentClient;
  s3: S3Client;
  /** Closes the clients' sockets. */
  destroy(): void;
}

const REGION = 'us-east-1';
/** Any credentials do for DynamoDB Local (`-sharedDb`) and dynalite. */
const DYNAMO_CREDENTIALS = { accessKeyId: 'fake', secretAccessKey: 'fake' };
/** s3rver checks signatures against these. */
const S3_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

/** SDK clients for the emulators: fake credentials, `us-east-1`, path-style S3, checksums only when required. */
export function clientsFor(endpoints: { dynamoEndpoint: string; s3Endpoint: string }): EmulatorClients {
  const dynamo = dynamoClient(endpoints.dynamoEndpoint);
  const s3 = s3Client(endpoints.s3Endpoint);
  return {
    dynamo,
    documents: DynamoDBDocumentClient.from(dynamo),
    s3,
    destroy() {
      dynamo.destroy();
      s3.destroy();
    },
  };
}

/**
 * Creates a cursor table as the contract defines it (`pk` S hash, `sk` S range, on-demand, TTL on
 * `expiresAt`) and waits until it is ACTIVE.
 *
 * @returns whether TTL could be enabled (dynalite has no UpdateTimeToLive).
 */
export async function createCursorTable(endpoint: string, tableName: string): Promise<{ ttlEnabled: boolean }> {
  const client = dynamoClient(endpoint);
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
    await untilActive(client, tableName);
    try {
      await client.send(
        new UpdateTimeToLiveCommand({
          TableName: tableName,
          TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
        }),
      );
      return { ttlEnabled: true };
    } catch (error) {
      if ((error as Error).name === 'UnknownOperationException') return { ttlEnabled: false };
      throw error;
    }
  } finally {
    client.destroy();
  }
}

/** Creates an S3 bucket. */
export async function createBucket(endpoint: string, bucket: string): Promise<void> {
  const client = s3Client(endpoint);
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  } finally {
    client.destroy();
  }
}

/** A DynamoDB client for the emulator at `endpoint` (its region and static credentials). */
export function dynamoClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({ endpoint, region: REGION, credentials: DYNAMO_CREDENTIALS });
}

function s3Client(endpoint: string): S3Client {
  return new S3Client({
    endpoint,
    region: REGION,
    credentials: S3_CREDENTIALS,
    forcePathStyle: true,
    // Otherwise streamed bodies are sent aws-chunked with trailing checksums, which s3rver stores verbatim.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

async function untilActive(client: DynamoDBClient, tableName: string): Promise<void> {
  // Both emulators create tables ACTIVE at once (dynalite is started with createTableMs 0); bounded anyway.
  for (let attempt = 0; attempt < 200; attempt++) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === 'ACTIVE') return;
    await delay(25);
  }
  throw new Error(`table ${tableName} did not become ACTIVE`);
}
