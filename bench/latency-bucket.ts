/**
 * For the feed's rows (feed-row.ts): an in-memory bucket whose every request waits as S3's does (20-50 ms, 2% at
 * 200 ms; the same model as the view's rows and the s3rver front), with S3's conditional writes honoured, and no
 * server's CPU behind it: what the figures measure is then the request pattern against latency, as on AWS, where
 * requests wait on S3 and not on an emulator's one Node process. No AWS SDK either: the s3rver rows show what its CPU a
 * request adds.
 *
 * It is the mirror's store (leaves, manifests, the latest view's documents) and the feed's `FeedStorage` at once, and
 * the bare loop writes through the same `putStream`, so both pay the same latency on the same requests. A stream is
 * stored as lib-storage stores it: one PUT after the body when it is at most one part (5 MiB), else a multipart
 * upload (create, then parts as they fill with at most 4 in flight, then complete). Package bytes are counted, not
 * kept (the process's memory stays the feed's); other objects are kept whole. Requests are counted by kind.
 */
import type { StoredDocument } from '../lambda/view/index.js';
import type { FeedObjectKind, FeedStorage } from '../lambda/feed/index.js';
import { DEFAULT_PART_BYTES, DEFAULT_PARTS_AT_ONCE } from '../lambda/feed/index.js';
import { mulberry32, type Prng } from '../testkit/index.js';

/** The latency's model, as the figures name it. */
export const BUCKET_LATENCY = '20-50 ms a request, 2% at 200 ms';

/** Requests of one kind, by what the key is. */
export type RequestCounts = Record<string, number>;

/** The in-memory bucket. See the module documentation. */
export class LatencyBucket implements FeedStorage {
  readonly where = 's3://latency-bench';
  readonly location = 's3://latency-bench';
  private readonly objects = new Map<string, { bytes: Buffer; tag: string }>();
  private readonly random: Prng;
  private serial = 0;
  /** Off while a row's mirror is written: only the measured run waits. */
  latency = false;
  /** Requests by `{verb} {class of key}` (e.g. `GET state`, `PUT nupkg`). */
  readonly counts: RequestCounts = {};
  /** Each measured request's start and end (ms since the process began), kept when `tracing` is set. */
  readonly trace: { verb: string; key: string; start: number; end: number }[] = [];
  tracing = false;

  constructor(seed: number) {
    this.random = mulberry32(seed);
  }

  /** All requests counted so far. */
  total(): number {
    return Object.values(this.counts).reduce((a, b) => a + b, 0);
  }

  private async request(verb: string, key: string): Promise<void> {
    const name = `${verb} ${classOf(key)}`;
    this.counts[name] = (this.counts[name] ?? 0) + 1;
    if (!this.latency) return;
    const ms = this.random.chance(0.02) ? 200 : 20 + this.random.int(0, 30);
    const start = performance.now();
    await new Promise((resolve) => setTimeout(resolve, ms));
    if (this.tracing) this.trace.push({ verb, key, start, end: performance.now() });
  }

  private store(key: string, bytes: Buffer): void {
    this.objects.set(key, { bytes, tag: `"${++this.serial}"` });
  }

  async read(key: string): Promise<StoredDocument | undefined> {
    await this.request('GET', key);
    return this.objects.get(key);
  }

  async getBytes(key: string): Promise<Buffer | undefined> {
    return (await this.read(key))?.bytes;
  }

  async writeIf(key: string, bytes: Buffer, expected: string | undefined): Promise<boolean> {
    await this.request('PUT-if', key);
    if (this.objects.get(key)?.tag !== expected) return false;
    this.store(key, bytes);
    return true;
  }

  async put(key: string, bytes: Buffer, _kind: FeedObjectKind): Promise<void> {
    await this.request('PUT', key);
    this.store(key, bytes);
  }

  async putLeaf(key: string, bytes: Buffer): Promise<void> {
    await this.put(key, bytes, 'json');
  }

  async putJson(key: string, value: unknown): Promise<void> {
    await this.put(key, Buffer.from(JSON.stringify(value)), 'json');
  }

  async putStream(key: string, body: AsyncIterable<Uint8Array>): Promise<void> {
    let filling = 0;
    let size = 0;
    let created: Promise<void> | undefined;
    const inFlight = new Set<Promise<void>>();
    const send = async (): Promise<void> => {
      created ??= this.request('POST create', key);
      await created;
      await this.request('PUT part', key);
    };
    const sendPart = async (): Promise<void> => {
      while (inFlight.size >= DEFAULT_PARTS_AT_ONCE) await Promise.race(inFlight);
      const part = send().finally(() => inFlight.delete(part));
      inFlight.add(part);
    };
    for await (const piece of body) {
      size += piece.byteLength;
      filling += piece.byteLength;
      while (filling > DEFAULT_PART_BYTES) {
        filling -= DEFAULT_PART_BYTES;
        await sendPart();
      }
    }
    if (created === undefined) await this.request('PUT', key);
    else {
      await sendPart();
      await Promise.all(inFlight);
      await this.request('POST complete', key);
    }
    this.store(key, Buffer.from(`${size} bytes`));
  }

  async delete(key: string): Promise<void> {
    await this.request('DELETE', key);
    this.objects.delete(key);
  }

  async *listKeys(prefix: string, startAfter = ''): AsyncIterable<string> {
    await this.request('LIST', prefix);
    yield* [...this.objects.keys()].filter((key) => key.startsWith(prefix) && key > startAfter).sort();
  }

  list(prefix: string): AsyncIterable<string> {
    return this.listKeys(prefix);
  }
}

/** What a key is, for the counts: the feed's documents, its state, the view's index, the mirror's leaves, … */
export function classOf(key: string): string {
  if (key.endsWith('.nupkg')) return 'nupkg';
  if (key.includes('feed-state/packages/')) return 'state';
  if (key.includes('feed-state/')) return 'feed-state';
  if (key.includes('feed/flat/')) return 'flat index';
  if (key.includes('feed/registration/')) return 'registration';
  if (key.includes('feed/vulnerabilities/')) return 'vulnerabilities';
  if (key.includes('feed/')) return 'feed other';
  if (key.includes('/packages/') || key.startsWith('packages/')) return 'view';
  if (key.includes('leaves/') || key.includes('/leaf/')) return 'leaf';
  return 'mirror other';
}
