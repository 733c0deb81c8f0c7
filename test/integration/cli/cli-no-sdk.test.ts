/**
 * A command on a local folder never loads the AWS SDK (the CLI's bundle requires `@aws-sdk/*` from node_modules, on
 * first use only): half of a local command's CPU when it did (0.200 against 0.100 CPU-s for `runs`, measured when the
 * feed's folder stores came with the S3 ones). Each command runs with a preloaded probe that counts the `@aws-sdk/`
 * modules in require's cache when the process exits; a command on S3 shows the probe sees them.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalStore } from '../../../lambda/stores/local-store.js';
import { generateCatalog } from '../../../testkit/catalog-generator.js';
import { runCli } from '../../../testkit/cli-process.js';
import { writeMirror } from '../../../testkit/view-mirror.js';

let temp: string;
let mirror: string;
let probe: string;

beforeAll(async () => {
  temp = await mkdtemp(join(tmpdir(), 'catalog-sync-no-sdk-'));
  mirror = join(temp, 'mirror');
  await writeMirror(new LocalStore(mirror), '', generateCatalog({ commits: 3, seed: 77 }).commits);
  probe = join(temp, 'probe.cjs');
  await writeFile(
    probe,
    "process.on('exit', () => require('node:fs').writeFileSync(process.env.SDK_PROBE_OUT, " +
      "String(Object.keys(require.cache).filter((path) => path.includes('/@aws-sdk/')).length)));\n",
  );
});
afterAll(() => rm(temp, { recursive: true, force: true }));

/** How many `@aws-sdk/` modules the command loaded, and how it ended. */
async function sdkModules(name: string, args: readonly string[]): Promise<{ modules: number; code: number | null }> {
  const out = join(temp, `${name}.out`);
  const result = await runCli(args, {
    SDK_PROBE_OUT: out,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${probe}`.trim(),
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'none',
    AWS_SECRET_ACCESS_KEY: 'none',
    AWS_ENDPOINT_URL: 'http://127.0.0.1:1',
  });
  return { modules: Number(await readFile(out, 'utf8')), code: result.code };
}

describe('commands on a folder load no AWS SDK', () => {
  it.each([
    ['version', ['--version']],
    ['runs', ['runs', '--data-dir', 'MIRROR']],
    ['status', ['status', '--data-dir', 'MIRROR']],
    ['changes', ['changes', '--data-dir', 'MIRROR', '--json']],
    ['view', ['view', '--data-dir', 'MIRROR']],
    ['verify-feed', ['verify', '--feed', '--data-dir', 'MIRROR']],
  ])('%s', async (name, args) => {
    const { modules, code } = await sdkModules(
      name,
      args.map((arg) => (arg === 'MIRROR' ? mirror : arg)),
    );
    expect(code).not.toBeNull();
    expect(modules).toBe(0);
  });

  it('the probe sees the SDK when a command uses S3', async () => {
    const { modules } = await sdkModules('s3', ['status', '--bucket', 'b', '--cursor-table', 't']);
    expect(modules).toBeGreaterThan(0);
  });
});
