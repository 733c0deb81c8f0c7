/**
 * A recording front for the local S3 and DynamoDB servers: it forwards every request unchanged to the emulator
 * behind it and records what IAM would judge on AWS: for S3 the method, bucket, key (or a listing's prefix) and
 * the answer's status; for DynamoDB the operation, table and partition key(s). s3rver and DynamoDB Local enforce
 * no IAM, so these records are how a test learns which grants a function's code really needs (test/integration/
 * iam-grants.test.ts judges them against the synthesized roles).
 *
 * Path-style S3 only (`S3_FORCE_PATH_STYLE=true`, as every test sets it). Nothing here shares code with lambda/.
 */
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { bodyOf, closeTracked, listenOnLoopback } from './loopback-listen.js';

/** An S3 request as IAM sees it. */
export interface S3Call {
  readonly service: 's3';
  readonly method: string;
  readonly bucket: string;
  /** The object's key; undefined for a request on the bucket itself (a listing). */
  readonly key?: string;
  /** A listing's `prefix` parameter, when it has one. */
  readonly listPrefix?: string;
  readonly status: number;
}

/** A DynamoDB request as IAM sees it. */
export interface DynamoCall {
  readonly service: 'dynamodb';
  /** The operation (`GetItem`, `Query`...), from `X-Amz-Target`. */
  readonly operation: string;
  readonly table: string;
  /** The partition keys the request touches: `dynamodb:LeadingKeys`. */
  readonly partitionKeys: readonly string[];
  readonly status: number;
}

export type RecordedCall = S3Call | DynamoCall;

/** The name of the tables' partition key (testkit/emulator-clients.ts creates tables with `pk`/`sk`). */
const PARTITION_KEY = 'pk';

/** A running front. */
export class AwsRequestRecorder {
  /** Every request forwarded, in the order answered. */
  readonly calls: RecordedCall[] = [];
  /** Requests this front could not read (a test asserts there are none: an unread request is a gap, not a pass). */
  readonly unreadable: string[] = [];
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    private readonly upstream: URL,
    private readonly service: 's3' | 'dynamodb',
  ) {}

  /** Starts a front on 127.0.0.1 forwarding to `target` (the emulator's `http://127.0.0.1:PORT`). */
  static async start(service: 's3' | 'dynamodb', target: string): Promise<AwsRequestRecorder> {
    const server = createServer();
    const front = new AwsRequestRecorder(server, new URL(target), service);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => void front.handle(req, res));
    await listenOnLoopback(server, front.sockets);
    return front;
  }

  /** `http://127.0.0.1:PORT`. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The calls recorded so far, and forgets them. */
  take(): RecordedCall[] {
    return this.calls.splice(0, this.calls.length);
  }

  stop(): Promise<void> {
    return closeTracked(this.server, this.sockets);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.on('error', () => {});
    const body = await bodyOf(req);
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const forward = request(
      { host: this.upstream.hostname, port: this.upstream.port, method, path: url, headers: req.headers },
      (response) => {
        const status = response.statusCode ?? 502;
        try {
          this.calls.push(
            this.service === 's3' ? s3Call(method, url, status) : dynamoCall(req.headers['x-amz-target'], body, status),
          );
        } catch (error) {
          this.unreadable.push(`${method} ${url}: ${(error as Error).message}`);
        }
        res.writeHead(status, response.headers);
        response.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    forward.end(body);
  }
}

/** A path-style S3 request: `/{bucket}` (with `prefix=` for a listing) or `/{bucket}/{key}`. */
export function s3Call(method: string, url: string, status: number): S3Call {
  const [path = '/', query = ''] = url.split('?', 2);
  const [, bucket = '', ...keyParts] = path.split('/');
  const params = new URLSearchParams(query);
  const key =
    keyParts.length === 0 || (keyParts.length === 1 && keyParts[0] === '')
      ? undefined
      : keyParts.map((part) => decodeURIComponent(part)).join('/');
  const listPrefix = key === undefined && params.has('prefix') ? params.get('prefix')! : undefined;
  return {
    service: 's3',
    method,
    bucket: decodeURIComponent(bucket),
    ...(key === undefined ? {} : { key }),
    ...(listPrefix === undefined ? {} : { listPrefix }),
    status,
  };
}

type AttributeValue = Record<string, unknown>;

/** A DynamoDB JSON request: its operation, table and the partition keys of its items (or of its key condition). */
export function dynamoCall(target: string | string[] | undefined, body: Buffer, status: number): DynamoCall {
  const operation = String(target ?? '').split('.')[1] ?? '';
  const input = JSON.parse(body.toString('utf8')) as {
    TableName?: string;
    Key?: Record<string, AttributeValue>;
    Item?: Record<string, AttributeValue>;
    KeyConditionExpression?: string;
    ExpressionAttributeNames?: Record<string, string>;
    ExpressionAttributeValues?: Record<string, AttributeValue>;
  };
  if (!input.TableName)
    throw new Error(`${operation} without TableName (batch and transaction operations are not read here)`);
  const partitionKeys: string[] = [];
  const item = input.Key ?? input.Item;
  if (item) partitionKeys.push(scalar(item[PARTITION_KEY]));
  if (input.KeyConditionExpression) {
    const names = input.ExpressionAttributeNames ?? {};
    for (const [, name, value] of input.KeyConditionExpression.matchAll(/(#?[A-Za-z0-9_]+)\s*=\s*(:[A-Za-z0-9_]+)/g)) {
      if ((names[name!] ?? name) === PARTITION_KEY)
        partitionKeys.push(scalar(input.ExpressionAttributeValues?.[value!]));
    }
  }
  if (partitionKeys.length === 0) throw new Error(`${operation} on ${input.TableName}: no partition key found`);
  return { service: 'dynamodb', operation, table: input.TableName, partitionKeys, status };
}

function scalar(value: AttributeValue | undefined): string {
  const found = value?.S ?? value?.N ?? value?.B;
  if (typeof found !== 'string') throw new Error(`partition key ${JSON.stringify(value)} is not a scalar`);
  return found;
}
