/**
 * Global setup of the interoperability suite (test/interop/vitest.config.ts): checks that the .NET SDK is there
 * (failing loudly when it is not: the suite never skips), and builds the C# probe (test/interop/probe/) once per
 * change of its sources, into node_modules/.cache/catalog-sync-interop/ (never into the repository's tree). Test files
 * reach it through `inject('probeDll')` (dotnet-kit.ts).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { dotnetEnvironment, runDotnet } from './dotnet-process.js';

const REPOSITORY = fileURLToPath(new URL('../..', import.meta.url));
const PROBE_SOURCES = join(REPOSITORY, 'test/interop/probe');
/** Where the probe is built; node_modules/ is ignored by git and belongs to one clone. */
export const PROBE_CACHE = join(REPOSITORY, 'node_modules/.cache/catalog-sync-interop/probe');
/** The .NET SDK the suite is written for: net10.0 projects, NuGet 7.9+ in restore. */
const REQUIRED_SDK_MAJOR = 10;

/** Checks the SDK, builds the probe if its sources (or the SDK) changed, and provides the probe's path. */
export default async function setup(project: TestProject): Promise<void> {
  const sdk = await sdkVersion();
  const dll = await buildProbe(sdk);
  project.provide('probeDll', dll);
  project.provide('dotnetSdk', sdk);
}

async function sdkVersion(): Promise<string> {
  let result;
  try {
    result = await runDotnet(['--version'], { env: dotnetEnvironment() });
  } catch (error) {
    throw new Error(
      'npm run test:interop needs the .NET SDK 10 (`dotnet` on the PATH), and could not run `dotnet --version`: ' +
        `${(error as Error).message}. Install the .NET SDK 10 (https://dot.net), or run \`npm test\`, which needs only Node.`,
      { cause: error },
    );
  }
  const version = result.stdout.trim();
  if (result.code !== 0 || Number.parseInt(version, 10) < REQUIRED_SDK_MAJOR) {
    throw new Error(
      `npm run test:interop needs the .NET SDK ${REQUIRED_SDK_MAJOR} or later; \`dotnet --version\` said ${JSON.stringify(version || result.stderr.trim())} (exit ${result.code})`,
    );
  }
  return version;
}

/** A hash of the probe's sources and the SDK version: the build is redone when it changes. */
function sourceHash(sdk: string): string {
  const hash = createHash('sha256').update(`sdk ${sdk}\n`);
  for (const name of readdirSync(PROBE_SOURCES)
    .filter((n) => /\.(cs|csproj|config)$/i.test(n))
    .sort()) {
    hash
      .update(`${name}\n`)
      .update(readFileSync(join(PROBE_SOURCES, name)))
      .update('\n');
  }
  return hash.digest('hex');
}

async function buildProbe(sdk: string): Promise<string> {
  const hash = sourceHash(sdk);
  const stamp = join(PROBE_CACHE, 'stamp');
  const artifacts = join(PROBE_CACHE, 'artifacts');
  const dll = join(artifacts, 'bin/Probe/release/Probe.dll');
  if (existsSync(dll) && existsSync(stamp) && readFileSync(stamp, 'utf8') === hash) return dll;
  rmSync(PROBE_CACHE, { recursive: true, force: true });
  mkdirSync(PROBE_CACHE, { recursive: true });
  const started = performance.now();
  // The probe's own packages (NuGet.Protocol 8.0.0 …) go to the user's global packages folder, as any build's do;
  // only the restores of the feeds under test get folders of their own (dotnet-kit.ts).
  const build = await runDotnet(
    [
      'build',
      join(PROBE_SOURCES, 'Probe.csproj'),
      '-c',
      'Release',
      '--artifacts-path',
      artifacts,
      '-nologo',
      '-v',
      'q',
    ],
    {
      env: dotnetEnvironment(),
    },
  );
  if (build.code !== 0 || !existsSync(dll)) {
    throw new Error(
      `building the interop probe failed (exit ${build.code}): dotnet build ${PROBE_SOURCES}\n${build.stdout}${build.stderr}`,
    );
  }
  writeFileSync(stamp, hash);
  console.log(`interop probe built in ${((performance.now() - started) / 1000).toFixed(1)} s: ${dll}`);
  return dll;
}
