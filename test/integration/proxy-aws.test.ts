/**
 * Every AWS request behind the forward proxy (testkit/forward-proxy.ts, counting what passes, inside tunnels too):
 * the lean S3 PUT and GET, the SDK's S3 listing, DynamoDB, Secrets Manager and Step Functions all go through the
 * proxy `HTTP_PROXY` names, none does for a host `NO_PROXY` lists, and the proxy's credentials (user:password in
 * its URL) appear in no output, `--verbose` included, nor in an error.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createTlsServer, request as httpsRequest, type Agent as HttpsAgent } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBackfillExecution } from '../../lambda/backfill/lambda/start-execution.js';
import { SourceSecretReader } from '../../lambda/runtime/source-secret.js';
import { awsClients } from '../../lambda/stores/aws-clients.js';
import { leanPutFor } from '../../lambda/stores/s3-put-wiring.js';
import { sdkRequestHandler } from '../../lambda/stores/proxy-agents.js';
import { generateCatalog, type GeneratedCatalog } from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { runCli } from '../../testkit/cli-process.js';
import { ForwardProxy } from '../../testkit/forward-proxy.js';
import { SecretsManagerServer } from '../../testkit/secrets-manager.js';
import { commitTicks, SyncHarness } from '../../testkit/sync-harness.js';

const PASSWORD = 'pr0xy-s3cret';
const ARN = 'arn:aws:states:us-east-1:123456789012:stateMachine:CatalogSyncBackfill';

let catalog: GeneratedCatalog;
let replica: CatalogReplica;
let harness: SyncHarness;
const proxies: ForwardProxy[] = [];
const saved = { ...process.env };

async function startProxy(credentials?: string): Promise<ForwardProxy> {
  const proxy = await ForwardProxy.start(credentials === undefined ? {} : { credentials });
  proxies.push(proxy);
  return proxy;
}

const hostOf = (url: string) => new URL(url).host;
/** The origins (`host:port`) the proxy carried requests to, with the methods sent to each. */
function seen(proxy: ForwardProxy): Map<string, Set<string>> {
  const byTarget = new Map<string, Set<string>>();
  for (const r of proxy.requests) byTarget.set(r.target, (byTarget.get(r.target) ?? new Set()).add(r.method));
  return byTarget;
}

beforeAll(async () => {
  catalog = generateCatalog({ commits: 6, seed: 241 });
  replica = await CatalogReplica.start({ catalog });
  harness = await SyncHarness.create();
});
afterAll(async () => {
  for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
  Object.assign(process.env, saved);
  await Promise.all(proxies.map((p) => p.stop()));
  await replica.stop();
});

describe('the CLI on DynamoDB and S3 behind a proxy', () => {
  it('sends every request (catalog, DynamoDB, the lean S3 PUTs) through it, and never shows its password', async () => {
    const proxy = await startProxy(`alice:${PASSWORD}`);
    const withCredentials = proxy.url.replace('//', `//alice:${PASSWORD}@`);
    const result = await runCli(
      [
        'run',
        '--source',
        replica.serviceIndexUrl,
        '--cursor-table',
        harness.table,
        '--bucket',
        harness.bucket,
        '--verbose',
        '--max-commits',
        '100',
      ],
      harness.env({ HTTP_PROXY: withCredentials, HTTPS_PROXY: withCredentials }),
    );
    expect(result.stderr + result.stdout).not.toContain(PASSWORD);
    expect(result.code).toBe(0);
    expect(proxy.refused).toBe(0);
    const { dynamoEndpoint, s3Endpoint } = harness.services;
    const byTarget = seen(proxy);
    expect(byTarget.get(hostOf(replica.origin))).toEqual(new Set(['GET']));
    expect(byTarget.get(hostOf(dynamoEndpoint))).toEqual(new Set(['POST']));
    expect(byTarget.get(hostOf(s3Endpoint))?.has('PUT')).toBe(true);
    // Every object the run stored was PUT through the proxy: each leaf, each manifest, the watermark.
    const put = new Set(
      proxy.requests
        .filter((r) => r.target === hostOf(s3Endpoint) && r.method === 'PUT')
        .map((r) => decodeURIComponent(r.path.split('?')[0]!).replace(`/${harness.bucket}/`, '')),
    );
    const stored = await harness.keys();
    expect(stored.length).toBeGreaterThan(catalog.commits.length * 2);
    expect([...put].sort()).toEqual([...stored].sort());
    expect(await harness.verify(catalog, replica.origin, commitTicks(catalog, -1))).toEqual([]);
  });

  it('with NO_PROXY listing the hosts, nothing goes through it', async () => {
    const proxy = await startProxy();
    const fresh = await SyncHarness.create();
    const result = await runCli(
      [
        'run',
        '--source',
        replica.serviceIndexUrl,
        '--cursor-table',
        fresh.table,
        '--bucket',
        fresh.bucket,
        '--max-commits',
        '100',
      ],
      fresh.env({ HTTP_PROXY: proxy.url, HTTPS_PROXY: proxy.url, NO_PROXY: '127.0.0.1,localhost' }),
    );
    expect(result.code).toBe(0);
    expect(proxy.requests).toEqual([]);
    expect(proxy.tunnels).toEqual([]);
  });

  it('a proxy refusing the credentials fails the run with exit 2, saying so without quoting them', async () => {
    const proxy = await startProxy(`alice:${PASSWORD}`);
    const wrong = proxy.url.replace('//', '//alice:wr0ng-s3cret@');
    const fresh = await SyncHarness.create();
    const result = await runCli(
      [
        'run',
        '--source',
        replica.serviceIndexUrl,
        '--cursor-table',
        fresh.table,
        '--bucket',
        fresh.bucket,
        '--verbose',
        '--max-commits',
        '100',
      ],
      fresh.env({ HTTP_PROXY: wrong, AWS_MAX_ATTEMPTS: '1' }),
    );
    expect(proxy.refused).toBeGreaterThan(0);
    // A setting to correct: exit 2, naming the variable, the proxy's address and what it refused.
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `HTTP_PROXY (${proxy.url}): answered HTTP 407 to the tunnel to ${hostOf(fresh.services.dynamoEndpoint)}`,
    );
    expect(result.stderr).toContain('refused the credentials in HTTP_PROXY');
    expect(result.stderr + result.stdout).not.toContain('wr0ng-s3cret');
    expect(result.stderr + result.stdout).not.toContain(PASSWORD);
  });
});

describe('the SDK clients in process behind a proxy', () => {
  beforeAll(() => {
    // The SDK reads endpoints, region and credentials from the process; the proxy variables are passed explicitly.
    Object.assign(process.env, harness.env());
    for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy'])
      delete process.env[name];
  });

  it('S3 listing and the lean GET go through it; with NO_PROXY they do not', async () => {
    const proxy = await startProxy(`bob:${PASSWORD}`);
    const env = { HTTP_PROXY: proxy.url.replace('//', `//bob:${PASSWORD}@`) };
    const { s3, dynamo } = awsClients(env, 2);
    try {
      const listed = await s3.send(new ListObjectsV2Command({ Bucket: harness.bucket, Prefix: 'commits/' }));
      const key = listed.Contents?.[0]?.Key;
      expect(key).toBeDefined();
      expect(await leanPutFor(s3).get(harness.bucket, key!)).toBeInstanceOf(Buffer);
      const methods = proxy.requests
        .filter((r) => r.target === hostOf(harness.services.s3Endpoint))
        .map((r) => r.method);
      expect(methods).toEqual(['GET', 'GET']);
      expect(proxy.requests.find((r) => r.path.includes('list-type=2'))).toBeDefined();
    } finally {
      s3.destroy();
      dynamo.destroy();
      await leanPutFor(s3).close();
    }

    const direct = awsClients(
      {
        ...env,
        NO_PROXY: `${new URL(harness.services.s3Endpoint).hostname}:${new URL(harness.services.s3Endpoint).port}`,
      },
      2,
    );
    const before = proxy.requests.length;
    try {
      await direct.s3.send(new ListObjectsV2Command({ Bucket: harness.bucket, Prefix: 'commits/' }));
      expect(proxy.requests.length).toBe(before);
    } finally {
      direct.s3.destroy();
      direct.dynamo.destroy();
      await leanPutFor(direct.s3).close();
    }
  });

  it('Secrets Manager goes through it', async () => {
    const secrets = await SecretsManagerServer.start();
    const proxy = await startProxy();
    try {
      secrets.secrets.set('arn:aws:secretsmanager:us-east-1:123456789012:secret:feed-AbCdEf', { string: 'a-token' });
      process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = secrets.endpoint;
      const reader = new SourceSecretReader({ HTTPS_PROXY: proxy.url, HTTP_PROXY: proxy.url });
      expect(await reader.read('arn:aws:secretsmanager:us-east-1:123456789012:secret:feed-AbCdEf')).toEqual({
        username: 'catalog-sync',
        password: 'a-token',
      });
      expect(proxy.requests).toEqual([
        expect.objectContaining({ via: 'connect', target: hostOf(secrets.endpoint), method: 'POST' }),
      ]);
      expect(secrets.requests).toHaveLength(1);
    } finally {
      await secrets.stop();
    }
  });

  it('Step Functions StartExecution goes through it', async () => {
    const proxy = await startProxy();
    const server: Server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
        res.end(
          JSON.stringify({
            executionArn: `${ARN.replace(':stateMachine:', ':execution:')}:run-1`,
            startDate: 1_790_000_000,
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      process.env.AWS_ENDPOINT_URL_SFN = endpoint;
      const started = await startBackfillExecution(ARN, {}, undefined, { HTTP_PROXY: proxy.url });
      expect(started.executionArn).toContain(':execution:CatalogSyncBackfill:run-1');
      expect(proxy.requests).toEqual([
        expect.objectContaining({ via: 'connect', target: hostOf(endpoint), method: 'POST' }),
      ]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('the SDK agents on an https origin', () => {
  it('NO_PROXY listing it: reached directly over TLS by the proxying agent, the proxy untouched', async () => {
    // A self-signed certificate for 127.0.0.1, made here (offline) by openssl.
    const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-tls-'));
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
        '-days',
        '1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    const server = createTlsServer(
      { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
      (_req, res) => res.end('over tls'),
    );
    rmSync(dir, { recursive: true, force: true });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const proxy = await startProxy();
    const port = (server.address() as AddressInfo).port;
    const { httpsAgent } = sdkRequestHandler(
      { HTTPS_PROXY: proxy.url, NO_PROXY: `127.0.0.1:${port}` },
      { connectionTimeout: 5_000, requestTimeout: 5_000 },
    );
    try {
      const get = () =>
        new Promise<string>((resolve, reject) => {
          const req = httpsRequest(
            { host: '127.0.0.1', port, path: '/', agent: httpsAgent as HttpsAgent, rejectUnauthorized: false },
            (res) => {
              const chunks: Buffer[] = [];
              res.on('data', (chunk: Buffer) => chunks.push(chunk));
              res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
            },
          );
          req.on('error', reject);
          req.end();
        });
      expect(await get()).toBe('over tls');
      expect(await get()).toBe('over tls');
      expect(proxy.tunnels).toEqual([]);
      expect(proxy.requests).toEqual([]);
    } finally {
      (httpsAgent as HttpsAgent).destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
