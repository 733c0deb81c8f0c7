/**
 * SHA-512 of a package's bytes on a worker thread, for the larger packages: hashing runs at about 670 MB/s on one
 * core, and on the main thread it took most of a feed's CPU on nuget.org's size mix (a few packages near 250 MB
 * among many small ones), holding up every other package's requests meanwhile. The bytes are copied (about a
 * fifteenth of the hash's cost) into pieces of {@link PIECE_BYTES} that are handed over (transferred, not copied
 * again), and at most {@link WINDOW_BYTES} of a package wait for the worker at once: the download waits for it
 * beyond that, so memory stays bounded whatever the package's size.
 *
 * One worker for the process, made on first use and not keeping the process alive; its code is inline, so a bundle
 * (the Lambda's) needs no file of its own.
 */
import { Worker } from 'node:worker_threads';
import { FeedError } from './errors.js';

/** Bytes copied into one piece before it is handed to the worker. */
export const PIECE_BYTES = 1024 * 1024;
/** Bytes of one package handed to the worker and not hashed yet, at most. */
export const WINDOW_BYTES = 2 * 1024 * 1024;

/**
 * The worker: a SHA-512 per hash id, fed pieces, each handed back once hashed. Run with `eval` as a script (CommonJS:
 * the worker gets none of the process's flags, so a process started with `--input-type=module` does not make it a
 * module).
 */
const WORKER_CODE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const hashes = new Map();
parentPort.on('message', (message) => {
  if (message.type === 'update') {
    let hash = hashes.get(message.id);
    if (hash === undefined) hashes.set(message.id, (hash = createHash('sha512')));
    hash.update(new Uint8Array(message.buffer, 0, message.length));
    parentPort.postMessage({ type: 'ack', id: message.id, bytes: message.length, buffer: message.buffer }, [
      message.buffer,
    ]);
  } else if (message.type === 'digest') {
    const hash = hashes.get(message.id) ?? createHash('sha512');
    hashes.delete(message.id);
    parentPort.postMessage({ type: 'digest', id: message.id, digest: hash.digest('base64') });
  } else if (message.type === 'drop') hashes.delete(message.id);
});
`;

type Answer =
  | { type: 'ack'; id: number; bytes: number; buffer: ArrayBuffer }
  | { type: 'digest'; id: number; digest: string };

/**
 * Pieces handed back by the worker once hashed, reused for the next ones: no piece is garbage for either thread's
 * collector to find, so memory is the pieces in flight, not what waits for a collection.
 */
const spare: ArrayBuffer[] = [];
/** Spare pieces kept at most (the rest are let go). */
const MAX_SPARE = 16;

function freshPiece(): Buffer {
  const buffer = spare.pop();
  return buffer === undefined ? Buffer.allocUnsafeSlow(PIECE_BYTES) : Buffer.from(buffer);
}

interface Pending {
  onAck(bytes: number): void;
  onDigest(digest: string): void;
  onFailure(error: Error): void;
}

let worker: Worker | undefined;
let nextId = 0;
const pending = new Map<number, Pending>();

function theWorker(): Worker {
  if (worker !== undefined) return worker;
  // None of the process's flags (`--input-type`, a profiler's, an inspector's): the worker is a plain script.
  const made = new Worker(WORKER_CODE, { eval: true, execArgv: [] });
  made.on('message', (answer: Answer) => {
    const waiting = pending.get(answer.id);
    if (answer.type === 'ack') {
      if (spare.length < MAX_SPARE) spare.push(answer.buffer);
      waiting?.onAck(answer.bytes);
    } else waiting?.onDigest(answer.digest);
  });
  const fail = (cause: unknown): void => {
    if (worker === made) worker = undefined;
    const error = new FeedError('the thread that hashes packages stopped', { cause });
    for (const waiting of pending.values()) waiting.onFailure(error);
    pending.clear();
    made.unref();
  };
  made.unref();
  made.on('error', fail);
  made.on('exit', (code) => fail(new Error(`exit code ${code}`)));
  worker = made;
  return made;
}

/**
 * The worker keeps the process alive while a hash is under way (an answer awaited is all a run may be waiting for: a
 * process that exited then would drop the run mid-package), and not otherwise (a CLI or a library user's process ends
 * as if there were no worker).
 */
function track(id: number, waiting: Pending): void {
  pending.set(id, waiting);
  if (pending.size === 1) worker?.ref();
}

function untrack(id: number): void {
  if (pending.delete(id) && pending.size === 0) worker?.unref();
}

/** One package's SHA-512 on the worker: {@link update} with each piece in order, then {@link digest} once. */
export class OffThreadHash {
  private readonly id = nextId++;
  private readonly worker = theWorker();
  /** The piece being filled: an ArrayBuffer of its own (not Node's pool), to transfer. */
  private piece = freshPiece();
  private filled = 0;
  private outstanding = 0;
  private room: (() => void) | undefined;
  private digested: ((digest: string) => void) | undefined;
  private failure: Error | undefined;
  private ended = false;

  constructor() {
    track(this.id, {
      onAck: (bytes) => {
        this.outstanding -= bytes;
        this.wake();
      },
      onDigest: (digest) => {
        untrack(this.id);
        this.digested?.(digest);
      },
      onFailure: (error) => {
        this.failure = error;
        this.wake();
        this.digested?.('');
      },
    });
  }

  /** Adds `bytes`; resolves once at most {@link WINDOW_BYTES} of this package wait for the worker. */
  async update(bytes: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < bytes.byteLength) {
      const take = Math.min(bytes.byteLength - offset, PIECE_BYTES - this.filled);
      this.piece.set(bytes.subarray(offset, offset + take), this.filled);
      this.filled += take;
      offset += take;
      if (this.filled === PIECE_BYTES) this.send();
    }
    while (this.outstanding > WINDOW_BYTES && this.failure === undefined)
      await new Promise<void>((resolve) => (this.room = resolve));
    if (this.failure !== undefined) throw this.failure;
  }

  /** The SHA-512 of every byte added, in base64 (as a leaf's `packageHash`). */
  async digest(): Promise<string> {
    if (this.failure !== undefined) throw this.failure;
    this.send();
    this.ended = true;
    const digest = await new Promise<string>((resolve) => {
      this.digested = resolve;
      this.worker.postMessage({ type: 'digest', id: this.id });
    });
    if (this.failure !== undefined) throw this.failure;
    return digest;
  }

  /** Forgets the hash (a body that failed): the worker drops what it holds of it. */
  drop(): void {
    if (this.ended) return;
    this.ended = true;
    untrack(this.id);
    this.worker.postMessage({ type: 'drop', id: this.id });
  }

  private send(): void {
    if (this.filled === 0) return;
    // The piece's memory is handed over (transferred, not copied: a piece has an ArrayBuffer of its own); a new one
    // is filled next.
    // A piece is never a SharedArrayBuffer: it is allocUnsafeSlow's or one the worker handed back.
    const buffer = this.piece.buffer as ArrayBuffer;
    const length = this.filled;
    this.outstanding += length;
    this.piece = freshPiece();
    this.filled = 0;
    this.worker.postMessage({ type: 'update', id: this.id, buffer, length }, [buffer]);
  }

  private wake(): void {
    const room = this.room;
    this.room = undefined;
    room?.();
  }
}
