/**
 * A SnapshotStore whose PUTs skip the AWS SDK: plain undici requests signed with SigV4 (sigv4.ts), on a
 * keep-alive pool sized to the leaf concurrency. For the benchmark's "what if" row only: it shows what the
 * engine reaches when a leaf PUT costs what the lean ceiling's does. A production version would also need the
 * SDK's retries (5xx, SlowDown, with backoff), credential refresh and error parsing. Reads, deletes and listings
 * go to the SDK store (they are rare).
 */
import { Agent } from 'undici';
import type { S3Client } from '@aws-sdk/client-s3';
import { S3SnapshotStore, type SnapshotStore } from '../lambda/stores/index.js';
import { encodeSegment, S3Signer } from './sigv4.js';

export class LeanS3SnapshotStore implements SnapshotStore {
  private readonly agent: Agent;
  private readonly endpoint: URL;
  private readonly signer: S3Signer;
  private readonly sdk: S3SnapshotStore;

  constructor(
    private readonly bucket: string,
    endpoint: string,
    client: S3Client,
    connections: number,
    credentials = { accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? '', secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? '' },
    region = process.env.AWS_REGION ?? 'us-east-1',
  ) {
    this.endpoint = new URL(endpoint);
    this.agent = new Agent({ connections, keepAliveTimeout: 30_000, pipelining: 1 });
    this.signer = new S3Signer(credentials, region);
    this.sdk = new S3SnapshotStore(bucket, client);
  }

  putLeaf(key: string, body: Buffer, metadata: Readonly<Record<string, string>>): Promise<void> {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'content-length': String(body.length) };
    for (const [name, value] of Object.entries(metadata)) headers[`x-amz-meta-${name}`] = value;
    return this.put(key, body, headers);
  }

  putJson(key: string, value: unknown): Promise<void> {
    const body = Buffer.from(JSON.stringify(value));
    return this.put(key, body, { 'content-type': 'application/json', 'content-length': String(body.length) });
  }

  getJson(key: string): Promise<unknown> {
    return this.sdk.getJson(key);
  }

  deleteKey(key: string): Promise<void> {
    return this.sdk.deleteKey(key);
  }

  listKeys(prefix: string, startAfter?: string): AsyncIterable<string> {
    return this.sdk.listKeys(prefix, startAfter);
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  private async put(key: string, body: Buffer, headers: Record<string, string>): Promise<void> {
    const path = `${this.endpoint.pathname.replace(/\/$/, '')}/${this.bucket}/${key.split('/').map(encodeSegment).join('/')}`;
    const response = await this.agent.request({
      origin: this.endpoint.origin,
      path,
      method: 'PUT',
      headers: this.signer.signPut(this.endpoint.host, path, headers, body),
      body,
    });
    const text = response.statusCode === 200 ? (await response.body.dump(), '') : await response.body.text();
    if (response.statusCode !== 200) throw new Error(`PUT ${key}: HTTP ${response.statusCode} ${text.slice(0, 200)}`);
  }
}
