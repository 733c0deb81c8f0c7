/**
 * A private feed's credentials in Secrets Manager (SOURCE_SECRET_ARN), through the Lambda handler against a
 * local Secrets Manager, a catalog replica and the emulators: the secret is read once per container, its
 * credentials go as HTTP Basic to the source's origin only, and nothing of it reaches a log, an error or the
 * run summary. A missing secret fails naming the setting and the ARN, and is read again on the next run.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { generateCatalog, type GeneratedCatalog } from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { SecretsManagerServer } from '../../testkit/secrets-manager.js';
import { SyncHarness } from '../../testkit/sync-harness.js';

/** A password that needs percent-encoding in a URL: ':' '@' '/' '%' and a space. */
const PASSWORD = 'pat:Qx7@fe/ed%41 z';
const USERNAME = 'feed-user';
const AUTHORIZATION = `Basic ${Buffer.from(`${USERNAME}:${PASSWORD}`).toString('base64')}`;
const ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:catalog-sync/feed-AbCdEf';

let catalog: GeneratedCatalog;
let leaves: CatalogReplica;
let feed: CatalogReplica;
let secrets: SecretsManagerServer;
let harness: SyncHarness;

beforeAll(async () => {
  catalog = generateCatalog({ commits: 6, seed: 1006, leavesPerCommit: [1, 2] });
  [leaves, secrets, harness] = await Promise.all([
    CatalogReplica.start({ catalog, pageSize: 3 }),
    SecretsManagerServer.start(),
    SyncHarness.create(),
  ]);
  feed = await CatalogReplica.start({ catalog, pageSize: 3, leafOrigin: leaves.origin });
});
afterAll(async () => {
  await Promise.all([leaves.stop(), feed.stop(), secrets.stop()]);
});

/** One invocation of the handler with `env`, capturing what Powertools writes (INFO to stdout, ERROR to stderr). */
async function invoke(env: Record<string, string>): Promise<{ result: unknown; error: unknown; logs: string }> {
  const saved = { ...process.env };
  Object.assign(
    process.env,
    harness.env({ AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.endpoint, ALLOWED_ORIGINS: leaves.origin, ...env }),
  );
  const lines: string[] = [];
  const capture = (chunk: string | Uint8Array): boolean => {
    lines.push(String(chunk));
    return true;
  };
  const spies = [
    vi.spyOn(process.stdout, 'write').mockImplementation(capture),
    vi.spyOn(process.stderr, 'write').mockImplementation(capture),
  ];
  try {
    const { handler } = await import('../../lambda/sync/lambda.js');
    const result = await handler({}, { getRemainingTimeInMillis: () => 120_000 }).then(
      (summary) => ({ result: summary, error: undefined }),
      (error: unknown) => ({ result: undefined, error }),
    );
    return { ...result, logs: lines.join('') };
  } finally {
    for (const spy of spies) spy.mockRestore();
    process.env = saved;
  }
}

/** Everything an invocation showed: its result or error (message, stack, JSON) and its logs. */
function shown(outcome: { result: unknown; error: unknown; logs: string }): string {
  const error = outcome.error as Error | undefined;
  return [JSON.stringify(outcome.result), error?.message, error?.stack, JSON.stringify(error), outcome.logs].join('\n');
}

describe('SOURCE_SECRET_ARN', () => {
  it('is read once per container; its credentials go to the source’s origin only and are shown nowhere', async () => {
    secrets.secrets.set(ARN, { string: JSON.stringify({ username: USERNAME, password: PASSWORD }) });
    const env = {
      CATALOG_SOURCE: feed.serviceIndexUrl,
      SOURCE_SECRET_ARN: ARN,
      CURSOR_NAME: 'private-feed',
      MAX_COMMITS: '4',
    };

    const first = await invoke(env);
    expect(first.error).toBeUndefined();
    expect(first.result).toMatchObject({ commits: 4, stoppedBy: 'max-commits' });
    const second = await invoke(env);
    expect(second.error).toBeUndefined();
    expect(second.result).toMatchObject({ commits: 2, stoppedBy: 'caught-up' });

    expect(secrets.readsOf(ARN)).toBe(1);
    expect(secrets.requests.every((request) => request.signed)).toBe(true);
    expect(feed.requests.length).toBeGreaterThan(3); // service index, catalog index (twice), pages
    for (const request of feed.requests) expect(request.headers.authorization, request.path).toBe(AUTHORIZATION);
    expect(leaves.requests.length).toBe(catalog.commits.reduce((n, commit) => n + commit.leaves.length, 0));
    for (const request of leaves.requests) expect(request.headers.authorization, request.path).toBeUndefined();
    for (const outcome of [first, second]) {
      expect(outcome.logs).toContain('"cursorName":"private-feed"');
      for (const secret of [PASSWORD, encodeURIComponent(PASSWORD), AUTHORIZATION.slice('Basic '.length)])
        expect(shown(outcome)).not.toContain(secret);
    }
  });

  it('a run failing on a page shows nothing of the secret', async () => {
    const arn = `${ARN.slice(0, -7)}-failng`;
    secrets.secrets.set(arn, { string: `  ${PASSWORD}\n` }); // a bare token, as `echo` leaves it
    const failing = feed.pagePaths()[0]!;
    feed.failWith(failing, 404, Number.POSITIVE_INFINITY);
    try {
      const outcome = await invoke({
        CATALOG_SOURCE: feed.serviceIndexUrl,
        SOURCE_SECRET_ARN: arn,
        CURSOR_NAME: 'private-failing',
      });
      expect((outcome.error as Error).message).toContain(`${feed.origin}${failing}: HTTP 404`);
      expect(outcome.logs).toContain('run stopped on an error');
      for (const secret of [PASSWORD, encodeURIComponent(PASSWORD)]) expect(shown(outcome)).not.toContain(secret);
      const token = feed.requests.at(-1)!.headers.authorization;
      expect(token).toBe(`Basic ${Buffer.from(`catalog-sync:${PASSWORD}`).toString('base64')}`);
    } finally {
      feed.clearFaults();
    }
  });

  it('a missing secret fails naming the setting and the ARN before any feed request; the next run reads it again', async () => {
    const arn = `${ARN.slice(0, -7)}-later1`;
    const env = { CATALOG_SOURCE: feed.serviceIndexUrl, SOURCE_SECRET_ARN: arn, CURSOR_NAME: 'private-later' };
    feed.clearLog();
    const missing = await invoke(env);
    expect((missing.error as Error).message).toBe(
      `SOURCE_SECRET_ARN: could not read secret ${arn}: ResourceNotFoundException: Secrets Manager can't find the specified secret.`,
    );
    expect(missing.logs).toContain('run could not start');
    expect(feed.requests).toEqual([]);

    secrets.secrets.set(arn, { string: JSON.stringify({ password: PASSWORD }) });
    const next = await invoke(env);
    expect(next.error).toBeUndefined();
    expect(next.result).toMatchObject({ stoppedBy: 'caught-up' });
    expect(secrets.readsOf(arn)).toBe(2);
  });

  it('credentials in both CATALOG_SOURCE and the secret are refused, naming CATALOG_SOURCE and not quoting either', async () => {
    const arn = `${ARN.slice(0, -7)}-both12`;
    secrets.secrets.set(arn, { string: PASSWORD });
    const url = new URL(feed.serviceIndexUrl);
    url.username = 'other';
    url.password = 'url-password-9';
    const outcome = await invoke({ CATALOG_SOURCE: url.href, SOURCE_SECRET_ARN: arn, CURSOR_NAME: 'private-both' });
    expect((outcome.error as Error).message).toMatch(
      /^CATALOG_SOURCE: "http:\/\/REDACTED@127\.0\.0\.1:\d+\/v3\/index\.json" has credentials and SOURCE_SECRET_ARN is set/,
    );
    for (const secret of [PASSWORD, 'url-password-9']) expect(shown(outcome)).not.toContain(secret);
  });
});
