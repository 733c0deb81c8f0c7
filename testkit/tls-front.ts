/**
 * An HTTPS front for a local HTTP server (the catalog replica, s3rver, DynamoDB Local): TLS with a self-signed
 * certificate for 127.0.0.1, each request forwarded upstream as it came (Host header included, so SigV4 signatures
 * still match). It counts the TLS connections it accepted, so a test can tell they all came through a proxy's
 * tunnels.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A self-signed certificate and its key, and the certificate as a file (for `NODE_EXTRA_CA_CERTS`). */
export interface TestCertificate {
  readonly key: Buffer;
  readonly cert: Buffer;
  readonly certFile: string;
  /** Removes the files. */
  dispose(): void;
}

/**
 * A certificate for `IP:127.0.0.1` (subjectAltName: clients check it, not the CN), valid for a day, made here by
 * openssl (offline); no fixture to expire or to keep a private key of.
 */
export function selfSignedCertificate(): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-tls-'));
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-days',
      '1',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'ignore' },
  );
  return {
    key: readFileSync(keyFile),
    cert: readFileSync(certFile),
    certFile,
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export class TlsFront {
  /** TLS connections accepted (handshake done). */
  connections = 0;
  /** Every request forwarded: method and path. */
  readonly requests: { readonly method: string; readonly path: string }[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly upstream = new Agent({ keepAlive: true });

  private constructor(
    private readonly server: Server,
    /** The `http://host:port` origin forwarded to; may be set after the start (a replica naming this front starts after it). */
    public target: string | undefined,
  ) {
    server.on('secureConnection', (socket: Socket) => {
      this.connections++;
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    server.on('request', (req, res) => {
      this.requests.push({ method: req.method ?? 'GET', path: req.url ?? '/' });
      const to = new URL(this.target ?? 'http://127.0.0.1:1');
      const out = request(
        {
          host: to.hostname,
          port: to.port,
          method: req.method,
          path: req.url,
          headers: req.headers,
          agent: this.upstream,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      out.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
      req.pipe(out);
    });
  }

  /** Starts a front on a free port of 127.0.0.1. */
  static async start(certificate: Pick<TestCertificate, 'key' | 'cert'>, target?: string): Promise<TlsFront> {
    const front = new TlsFront(createServer({ key: certificate.key, cert: certificate.cert, keepAlive: true }), target);
    await new Promise<void>((resolve) => front.server.listen(0, '127.0.0.1', resolve));
    return front;
  }

  /** `https://127.0.0.1:port`. */
  get origin(): string {
    return `https://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** `127.0.0.1:port`, as a proxy's tunnel names it. */
  get host(): string {
    return new URL(this.origin).host;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.upstream.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
