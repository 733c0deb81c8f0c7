/**
 * The npm package as a user gets it: `npm pack`, `npm install -g <tarball> --prefix <folder>`, then the installed
 * `catalog-sync` command, the library entry (`catalog-sync`) and the constructs (`catalog-sync/cdk`), with their
 * types, from outside this repository. Dependencies come from npm's cache where it has them (`--prefer-offline`:
 * `npm ci` filled it with every tarball; the registry is asked only for the version lists).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../../lambda/contract/run-summary.js';
import { formatTimestamp } from '../../lambda/contract/time.js';
import { commitKeyOf } from '../../lambda/contract/keys.js';
import { generateCatalog } from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { commitTicks } from '../../testkit/sync-harness.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
/** Packing and installing on a busy 2-core machine: tens of seconds, more when the registry is slow. */
const INSTALL_TIMEOUT = 300_000;

interface Done {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function exec(
  command: string,
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<Done> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? REPO,
      env: { ...process.env, NO_COLOR: '1', npm_config_update_notifier: 'false', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function ok(
  command: string,
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<Done> {
  const done = await exec(command, args, options);
  if (done.code !== 0)
    throw new Error(`${command} ${args.join(' ')} exited ${done.code}\n${done.stderr}\n${done.stdout}`);
  return done;
}

let root: string;
let files: string[];
/** The install prefix: `bin/catalog-sync`, and the package in `lib/node_modules/catalog-sync`. */
let prefix: string;
/** A folder beside the installed package: a script there imports `catalog-sync` as any app would. */
let app: string;
let bin: string;
/** What `npm install -g` of the tarball printed. */
let installed: Done;

beforeAll(async () => {
  expect(existsSync(join(REPO, 'dist', 'lambda', 'cli.js')), 'dist/ is built (npm test builds it first)').toBe(true);
  root = await mkdtemp(join(tmpdir(), 'catalog-sync-package-'));
  // --ignore-scripts: dist/ is already built, and `prepare` rebuilding it would race the other test files.
  const packed = await ok('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', root]);
  const [info] = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  files = info!.files.map((file) => file.path).sort();
  prefix = join(root, 'prefix');
  installed = await ok(
    'npm',
    [
      'install',
      '--global',
      join(root, info!.filename),
      '--prefix',
      prefix,
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
    ],
    { cwd: root },
  );
  bin = join(prefix, 'bin', 'catalog-sync');
  app = join(prefix, 'lib');
}, INSTALL_TIMEOUT);

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe('the tarball', () => {
  it('ships only what runs: the built library, the constructs, the command, README, LICENSE', () => {
    expect(files.length).toBeGreaterThan(50);
    for (const path of files) {
      // bin/ and dist/cli/ are CommonJS: each has a package.json saying so.
      expect(path, path).toMatch(
        /^(bin\/(catalog-sync\.js|package\.json)|dist\/(lambda|infra)\/.+\.(js|d\.ts)|dist\/cli\/([\w-]+\.js|package\.json)|package\.json|README\.md|LICENSE)$/,
      );
      expect(path, path).not.toMatch(/^(test|bench|chaos|\.ci|testkit|scripts|docs|dist\/testkit|dist\/bench)\//);
    }
    // The CDK app of this repository needs cdk-nag, a devDependency: it is not part of the package.
    expect(files.filter((path) => path.startsWith('dist/infra/app.'))).toEqual([]);
    // No source maps: they would point at TypeScript sources the package does not hold (issue 34).
    expect(files.filter((path) => path.endsWith('.map'))).toEqual([]);
  });

  it('has no script to run when installed, and its install prints no warning about one', async () => {
    const pkg = JSON.parse(await readFile(join(app, 'node_modules', 'catalog-sync', 'package.json'), 'utf8')) as {
      scripts?: Record<string, string>;
    };
    const lifecycle = ['preinstall', 'install', 'postinstall', 'preprepare', 'prepare', 'postprepare'];
    expect(Object.keys(pkg.scripts ?? {}).filter((name) => lifecycle.includes(name))).toEqual([]);
    expect(installed.stdout + installed.stderr).not.toMatch(/install-scripts|allow-?scripts/i);
    // Nor does a shipped file name a source map it lacks.
    const shipped = files
      .filter((path) => path.endsWith('.js'))
      .map((path) => join(app, 'node_modules', 'catalog-sync', path));
    const mapped: string[] = [];
    for (const path of shipped) if ((await readFile(path, 'utf8')).includes('//# sourceMappingURL=')) mapped.push(path);
    expect(mapped).toEqual([]);
  });

  it('holds both entries with their types, and the compiled handlers the constructs bundle', () => {
    for (const path of [
      'dist/lambda/index.js',
      'dist/lambda/index.d.ts',
      'dist/infra/index.js',
      'dist/infra/index.d.ts',
      'dist/lambda/cli.js',
      'dist/lambda/sync/lambda.js',
      'dist/lambda/backfill/lambda/planner.js',
      'dist/lambda/backfill/lambda/worker.js',
      'dist/lambda/backfill/lambda/finalizer.js',
      'dist/lambda/consumer/index.js',
      'dist/lambda/consumer/index.d.ts',
      'dist/lambda/consumer/lambda.js',
      'dist/lambda/consumer/lambda.d.ts',
      'dist/lambda/view/index.js',
      'dist/lambda/view/index.d.ts',
      'dist/lambda/view/lambda.js',
      'dist/lambda/view/lambda.d.ts',
      'dist/lambda/feed/index.js',
      'dist/lambda/feed/index.d.ts',
      'dist/lambda/feed/lambda.js',
      'dist/lambda/feed/lambda.d.ts',
    ]) {
      expect(files, path).toContain(path);
    }
  });

  it('declares the entries, and aws-cdk-lib and constructs as optional peers', async () => {
    const pkg = JSON.parse(await readFile(join(app, 'node_modules', 'catalog-sync', 'package.json'), 'utf8'));
    expect(pkg.exports['.']).toEqual({ types: './dist/lambda/index.d.ts', default: './dist/lambda/index.js' });
    expect(pkg.exports['./cdk']).toEqual({ types: './dist/infra/index.d.ts', default: './dist/infra/index.js' });
    expect(pkg.exports['./consumer']).toEqual({
      types: './dist/lambda/consumer/index.d.ts',
      default: './dist/lambda/consumer/index.js',
    });
    expect(pkg.exports['./consumer/lambda']).toEqual({
      types: './dist/lambda/consumer/lambda.d.ts',
      default: './dist/lambda/consumer/lambda.js',
    });
    expect(pkg.exports['./view']).toEqual({
      types: './dist/lambda/view/index.d.ts',
      default: './dist/lambda/view/index.js',
    });
    expect(pkg.exports['./view/lambda']).toEqual({
      types: './dist/lambda/view/lambda.d.ts',
      default: './dist/lambda/view/lambda.js',
    });
    expect(pkg.exports['./feed']).toEqual({
      types: './dist/lambda/feed/index.d.ts',
      default: './dist/lambda/feed/index.js',
    });
    expect(pkg.exports['./feed/lambda']).toEqual({
      types: './dist/lambda/feed/lambda.d.ts',
      default: './dist/lambda/feed/lambda.js',
    });
    expect(Object.keys(pkg.peerDependencies).sort()).toEqual(['aws-cdk-lib', 'constructs']);
    expect(pkg.peerDependenciesMeta).toEqual({ 'aws-cdk-lib': { optional: true }, constructs: { optional: true } });
    expect(pkg.dependencies['aws-cdk-lib']).toBeUndefined();
    // Optional peers are not installed with the command: a user of the CLI does not download the CDK.
    expect(existsSync(join(app, 'node_modules', 'aws-cdk-lib'))).toBe(false);
    expect(existsSync(join(app, 'node_modules', 'catalog-sync', 'node_modules', 'aws-cdk-lib'))).toBe(false);
  });
});

describe('the installed command', () => {
  it('prints its help and version', async () => {
    const help = await ok(bin, ['--help'], { cwd: root });
    expect(help.stdout).toMatch(/^Usage: catalog-sync/);
    expect(help.stdout).toContain('run [options]');
    const version = await ok(bin, ['--version'], { cwd: root });
    const pkg = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8'));
    expect(version.stdout.trim()).toBe(pkg.version);
  });

  it('syncs a catalog replica into a folder', async () => {
    const catalog = generateCatalog({ commits: 30, seed: 13, leavesPerCommit: [1, 3] });
    const replica = await CatalogReplica.start({ catalog, pageSize: 10 });
    try {
      const dataDir = join(root, 'data');
      const run = await exec(bin, ['run', '--source', replica.serviceIndexUrl, '--data-dir', dataDir, '--json'], {
        cwd: root,
      });
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const summary = JSON.parse(run.stdout.trim()) as RunSummary;
      expect(summary.commits).toBe(30);
      expect(summary.cursorAfter).toBe(formatTimestamp(commitTicks(catalog, -1)));
      expect((await readdir(join(dataDir, 'commits'))).length).toBe(30);
      const status = await ok(bin, ['status', '--source', replica.serviceIndexUrl, '--data-dir', dataDir], {
        cwd: root,
      });
      expect(status.stdout).toContain(summary.cursorAfter);
    } finally {
      await replica.stop();
    }
  });
});

describe('the library and the constructs, imported by name', () => {
  it('`catalog-sync` gives the engine, the stores, the settings and the errors', async () => {
    await writeFile(
      join(app, 'library.mjs'),
      `import * as lib from 'catalog-sync';
const names = ['runSlice', 'planBackfill', 'runRange', 'finishBackfill', 'LocalStore', 'DynamoStore', 'S3SnapshotStore',
  'CatalogClient', 'HttpClient', 'parseSettings', 'SettingsError', 'CatalogSyncError', 'SyncError', 'ErrorCode', 'StoppedBy', 'VERSION'];
console.log(JSON.stringify(Object.fromEntries(names.map((name) => [name, typeof lib[name]]))));
console.log(JSON.stringify(lib.parseSettings({ CATALOG_SOURCE: 'https://example.org/v3/index.json' }).source));
`,
    );
    const done = await ok(process.execPath, ['library.mjs'], { cwd: app });
    const [types, source] = done.stdout.trim().split('\n');
    const kinds = JSON.parse(types!) as Record<string, string>;
    for (const [name, kind] of Object.entries(kinds)) expect(kind, name).not.toBe('undefined');
    expect(kinds.runSlice).toBe('function');
    expect(kinds.VERSION).toBe('string');
    expect(JSON.parse(source!)).toBe('https://example.org/v3/index.json');
  });

  it("`catalog-sync/consumer` reads the installed command's mirror in order, as a library", async () => {
    const catalog = generateCatalog({ commits: 12, seed: 17, leavesPerCommit: [1, 3] });
    const replica = await CatalogReplica.start({ catalog, pageSize: 5 });
    try {
      const dataDir = join(root, 'consumed');
      await ok(bin, ['run', '--source', replica.serviceIndexUrl, '--data-dir', dataDir], { cwd: root });
      await writeFile(
        join(app, 'consumer.mjs'),
        `import { consume, folderConsumerStores, readCommits } from 'catalog-sync/consumer';
import { consumerHandler } from 'catalog-sync/consumer/lambda';
const { mirror, cursors } = folderConsumerStores(${JSON.stringify(dataDir)});
const keys = [];
for await (const commit of readCommits(mirror)) keys.push(commit.commitKey);
const result = await consume('library', async (commit) => void (await commit.leaves[0].json()), { mirror, cursors });
const faces = {};
for (const face of ['catalog-sync/consumer/lambda', 'catalog-sync/view/lambda']) faces[face] = Object.keys(await import(face)).sort();
console.log(JSON.stringify({ keys, commits: result.commits, handler: typeof consumerHandler, faces }));
`,
      );
      const done = await ok(process.execPath, ['consumer.mjs'], { cwd: app });
      const out = JSON.parse(done.stdout.trim()) as { keys: string[]; commits: number; handler: string };
      expect(out.keys).toEqual(catalog.commits.map((commit) => commitKeyOf(commit.timestamp)));
      expect(out).toMatchObject({ commits: 12, handler: 'function' });
      // The Lambda subpaths give what they gave before their files moved into their wings.
      expect(out).toMatchObject({
        faces: {
          'catalog-sync/consumer/lambda': ['batchConsumerHandler', 'consumerHandler', 'consumerLambdaSettings'],
          'catalog-sync/view/lambda': ['handler', 'viewHandler'],
        },
      });
    } finally {
      await replica.stop();
    }
  });

  it(
    '`catalog-sync/cdk` synthesizes an app that bundles the installed handler, and both entries type-check',
    async () => {
      // The app's own CDK: the optional peers, as an app that uses the constructs installs them (linked from here).
      for (const name of ['aws-cdk-lib', 'constructs'])
        await symlink(join(REPO, 'node_modules', name), join(app, 'node_modules', name), 'dir');
      // NodejsFunction takes the app's project root from its lock file (found from the working directory).
      await writeFile(
        join(app, 'package-lock.json'),
        JSON.stringify({ name: 'app', lockfileVersion: 3, requires: true, packages: {} }),
      );
      const out = join(root, 'cdk.out');
      await writeFile(
        join(app, 'app.mts'),
        `import { App, Stack } from 'aws-cdk-lib';
import { CatalogSync, CatalogBackfill, type CatalogSyncProps, type CatalogBackfillProps } from 'catalog-sync/cdk';
import { runSlice, type SyncSettings, type RunSummary } from 'catalog-sync';

const props: CatalogSyncProps = { prefix: 'nuget/' };
const app = new App(); // writes to CDK_OUTDIR, as under the cdk CLI
const stack = new Stack(app, 'Consumer');
const sync: CatalogSync = new CatalogSync(stack, 'Sync', props);
const backfillProps: Partial<CatalogBackfillProps> = { prefix: sync.prefix };
const engine: (settings: SyncSettings, deps: never) => Promise<RunSummary> = runSlice;
void CatalogBackfill; void backfillProps; void engine;
app.synth();
`,
      );
      await writeFile(
        join(app, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            target: 'ES2022',
            strict: true,
            skipLibCheck: true,
            types: [],
          },
          files: ['app.mts'],
        }),
      );
      // tsc type-checks the app against both entries' .d.ts and compiles it (app.mjs), as a TypeScript user would.
      const typecheck = await exec(join(REPO, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], { cwd: app });
      expect(typecheck.stdout + typecheck.stderr).toBe('');
      expect(typecheck.code).toBe(0);

      await mkdir(out);
      await ok(process.execPath, ['app.mjs'], { cwd: app, env: { CDK_OUTDIR: out } });
      const template = JSON.parse(await readFile(join(out, 'Consumer.template.json'), 'utf8'));
      const functions = Object.values(
        template.Resources as Record<string, { Type: string; Properties: Record<string, any> }>,
      ).filter(
        (resource) => resource.Type === 'AWS::Lambda::Function' && resource.Properties.Handler === 'index.handler',
      );
      expect(functions).toHaveLength(1);
      const assets = (await readdir(out)).filter((name) => name.startsWith('asset.'));
      const bundles = assets.filter((name) => existsSync(join(out, name, 'index.mjs')));
      expect(bundles.length).toBeGreaterThanOrEqual(1);
      // The bundle is the engine itself, from the installed package's compiled handler.
      const code = await readFile(join(out, bundles[0]!, 'index.mjs'), 'utf8');
      expect(code).toContain('catalog-sync');
      expect(code.length).toBeGreaterThan(100_000);
      // Its source map (the construct's own, made as the app bundles) names the installed package's JavaScript: files
      // the app holds, not TypeScript sources the package does not ship.
      const map = JSON.parse(await readFile(join(out, bundles[0]!, 'index.mjs.map'), 'utf8')) as { sources: string[] };
      const ours = map.sources.filter((source) => /node_modules\/catalog-sync\/(?!node_modules\/)/.test(source));
      expect(ours.length).toBeGreaterThan(10);
      expect(ours.filter((source) => !/node_modules\/catalog-sync\/dist\/lambda\/.+\.js$/.test(source))).toEqual([]);
    },
    INSTALL_TIMEOUT,
  );
});
