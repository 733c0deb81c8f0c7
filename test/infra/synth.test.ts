/**
 * `npx cdk synth` from the repository root, as on a fresh clone: the CLI of package.json, the app of cdk.json,
 * no AWS credentials, no profile, no region, no Docker. cdk-nag runs inside the app, so this also fails on
 * any unacknowledged finding.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The environment without anything that could reach AWS: credentials, profiles, regions, endpoints. */
function offlineEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^AWS_/.test(key) && key !== 'AWS_CA_BUNDLE') continue;
    if (key === 'NODE_ENV' || key.startsWith('VITEST')) continue; // the app must run as it does outside the tests
    env[key] = value;
  }
  // Instance metadata is the last link of the credential chain: off, so nothing waits on it.
  env.AWS_EC2_METADATA_DISABLED = 'true';
  env.CDK_DISABLE_CLI_TELEMETRY = 'true';
  return env;
}

describe('npx cdk synth', () => {
  const out = mkdtempSync(join(tmpdir(), 'catalog-sync-cdk-out-'));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('works offline without credentials and writes a template with the bundled function', async () => {
    const started = Date.now();
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(
        'npx',
        ['cdk', 'synth', '--quiet', '--no-notices', '--output', out],
        { cwd: ROOT, env: offlineEnv(), timeout: 170_000, maxBuffer: 16 * 1024 * 1024 },
        (error, stdout, stderr) =>
          resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    expect(result.code, `cdk synth failed after ${seconds}s:\n${result.stderr}\n${result.stdout}`).toBe(0);
    expect(result.stderr).not.toMatch(/AwsSolutions-|\[Error|\[Warning/);

    const template = JSON.parse(readFileSync(join(out, 'CatalogSync.template.json'), 'utf8')) as {
      Resources: Record<string, { Type: string }>;
    };
    const types = Object.values(template.Resources).map((resource) => resource.Type);
    expect(types).toEqual(
      expect.arrayContaining(['AWS::Lambda::Function', 'AWS::DynamoDB::Table', 'AWS::S3::Bucket', 'AWS::Events::Rule']),
    );
    const assets = readdirSync(out).filter((name) => name.startsWith('asset.'));
    expect(assets.some((dir) => existsSync(join(out, dir, 'index.mjs')))).toBe(true);
    const report = JSON.parse(readFileSync(join(out, 'validation-report.json'), 'utf8')) as {
      pluginReports: Array<{ summary?: { status?: string } }>;
    };
    expect(report.pluginReports.filter((plugin) => plugin.summary?.status === 'failure')).toEqual([]);
  }, 180_000);
});
