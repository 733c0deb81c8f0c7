/**
 * How the catalog replica answers: a document with its validators and content coding (and 304 when the client
 * has it), and each injected fault (a status, a reset, an overridden body, a stale page, a gzip bomb, a trickled,
 * truncated or stalled body). `CatalogReplica` decides what to answer; this writes it.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { entityTag, isNotModified } from './conditional-get.js';
import { gzipBomb } from './gzip-bomb.js';
import { encodeBody, negotiateCoding, type ContentCoding } from './http-encoding.js';
import type { Fault } from './replica-faults.js';
import type { ReplicaSource, ServedDocument } from './replica-source.js';

/** Writes the replica's answers, and keeps the responses that never end on their own until {@link endStalled}. */
export class ReplicaResponder {
  private readonly stalled = new Set<ServerResponse>();
  private readonly encoded = new WeakMap<ServedDocument, Map<ContentCoding, Buffer>>();

  constructor(
    /** What is served now (the replica may switch catalogs). */
    private readonly source: () => ReplicaSource,
    /** Aborted when the replica stops. */
    private readonly closing: AbortSignal,
    /** Told of a trickled response the client closed before its last byte. */
    private readonly onAbandoned: (path: string) => void,
  ) {}

  /** Ends every stalled or trickling response. */
  endStalled(): void {
    for (const res of this.stalled) res.destroy();
    this.stalled.clear();
  }

  /** Answers a request that `fault` was armed for. */
  async injure(req: IncomingMessage, res: ServerResponse, path: string, fault: Fault): Promise<void> {
    switch (fault.kind) {
      case 'status':
        res.writeHead(fault.status, { 'Content-Type': 'text/plain', ...fault.headers }).end(`injected ${fault.status}`);
        return;
      case 'reset':
        req.socket.resetAndDestroy();
        return;
      case 'override':
        this.send(req, res, fault.document, { status: fault.status, headers: fault.headers });
        return;
      case 'stale':
        this.send(req, res, this.source().stalePage(path, fault.commitsBack));
        return;
      case 'gzip-bomb': {
        const body = await gzipBomb();
        res.writeHead(200, {
          'Content-Type': 'application/json',
          'Content-Encoding': 'gzip',
          'Content-Length': body.length,
        });
        res.end(body);
        return;
      }
      case 'trickle': {
        const document = this.source().resolve(path);
        if (!document) {
          res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not Found');
          return;
        }
        this.trickle(res, path, document, fault.intervalMs);
        return;
      }
      case 'truncate':
      case 'stall': {
        const document = this.source().resolve(path);
        if (!document) {
          res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not Found');
          return;
        }
        this.send(req, res, document, { partial: fault.kind });
        return;
      }
    }
  }

  /** Answers with `document`: validators, 304, content coding, and a partial body when asked. */
  send(
    req: IncomingMessage,
    res: ServerResponse,
    document: ServedDocument,
    options: { status?: number; headers?: OutgoingHttpHeaders; partial?: 'truncate' | 'stall' } = {},
  ): void {
    const status = options.status ?? 200;
    const etag = entityTag(document.body);
    const headers: OutgoingHttpHeaders = {
      'Content-Type': document.contentType,
      ETag: etag,
      Vary: 'Accept-Encoding',
      ...(document.lastModified ? { 'Last-Modified': document.lastModified.toUTCString() } : {}),
      ...options.headers,
    };
    if (status === 200 && !options.partial && isNotModified(req.headers, etag, document.lastModified)) {
      delete headers['Content-Type'];
      res.writeHead(304, headers).end();
      return;
    }
    const presetCoding = Object.keys(headers).some((name) => name.toLowerCase() === 'content-encoding');
    const coding = presetCoding ? 'identity' : negotiateCoding(req.headers['accept-encoding']);
    const body = this.encode(document, coding);
    if (coding !== 'identity') headers['Content-Encoding'] = coding;
    headers['Content-Length'] = body.length;
    res.writeHead(status, headers);
    if (!options.partial) {
      res.end(body);
      return;
    }
    // Headers go out now even when there is no body to write (HEAD).
    res.flushHeaders();
    const half = body.subarray(0, Math.floor(body.length / 2));
    if (options.partial === 'truncate') {
      // Destroy only once the half is handed to the kernel, so the client sees those bytes first.
      res.write(half, () => res.destroy());
      if (req.method === 'HEAD') res.destroy();
      return;
    }
    this.stalled.add(res);
    res.on('close', () => this.stalled.delete(res));
    res.write(half);
  }

  private trickle(res: ServerResponse, path: string, document: ServedDocument, intervalMs: number): void {
    res.writeHead(200, { 'Content-Type': document.contentType, 'Content-Length': document.body.length });
    res.flushHeaders();
    let sent = 0;
    const timer = setInterval(() => {
      if (sent < document.body.length) res.write(document.body.subarray(sent, ++sent));
      if (sent === document.body.length) {
        clearInterval(timer);
        res.end();
      }
    }, intervalMs);
    this.stalled.add(res);
    res.on('close', () => {
      clearInterval(timer);
      this.stalled.delete(res);
      if (!res.writableFinished && !this.closing.aborted) {
        this.onAbandoned(path);
      }
    });
  }

  private encode(document: ServedDocument, coding: ContentCoding): Buffer {
    if (coding === 'identity') return document.body;
    let byCoding = this.encoded.get(document);
    if (!byCoding) this.encoded.set(document, (byCoding = new Map()));
    let body = byCoding.get(coding);
    if (!body) byCoding.set(coding, (body = encodeBody(document.body, coding)));
    return body;
  }
}
