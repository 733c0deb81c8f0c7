/**
 * The C# probe (test/interop/probe/, built by probe-setup.ts) from the tests: NuGet.Versioning's answers for version
 * strings, and a feed as NuGet.Protocol reads it. Each feed reading gets a fresh NuGet http-cache, so that every
 * answer comes from the feed as it is now (NuGet keeps the service index and vulnerability data there whatever its
 * cache settings say).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { dotnetEnvironment, runDotnet } from './dotnet-process.js';

/** NuGet.Versioning's answer for one input string. */
export type NuGetVersionAnswer =
  | { readonly i: number; readonly valid: false }
  | {
      readonly i: number;
      readonly valid: true;
      /** `ToNormalizedString()`. */
      readonly normalized: string;
      /** `ToFullString()`. */
      readonly full: string;
      /** `ToNormalizedString().ToLowerInvariant()`: the identity as nuget.org's flat container spells it. */
      readonly key: string;
      readonly prerelease: boolean;
      readonly semver2: boolean;
      readonly metadata: string | null;
    };

/** NuGet.Versioning's answers for a list of inputs. */
export interface NuGetVersionAnswers {
  /** One per input, in input order. */
  readonly answers: readonly NuGetVersionAnswer[];
  /** The indexes of the valid inputs in `VersionComparer.Default` order; inputs that compare equal share a group. */
  readonly order: readonly (readonly number[])[];
}

/** One version of a feed as NuGet.Protocol reads it (FeedCommand.cs). */
export interface FeedVersion {
  readonly id: string;
  readonly version: string;
  readonly fullVersion: string;
  readonly inFlat: boolean;
  readonly inRegistration: boolean;
  readonly listed: boolean | null;
  readonly deprecation: {
    reasons: string[];
    message: string | null;
    alternatePackage: { id: string; range: string | null } | null;
  } | null;
  readonly vulnerabilities: { advisoryUrl: string | null; severity: number }[] | null;
  readonly registrationDependencies: string[] | null;
  readonly audit: { url: string; severity: number; versions: string }[] | null;
  readonly download:
    | null
    | { found: false; error?: string }
    | {
        found: true;
        size: number;
        sha512: string;
        nuspec?: { id: string; version: string; dependencies: string[] };
        readError?: string;
      };
}

/** A feed as NuGet.Protocol 8.0.0 reads it. */
export interface FeedReading {
  /** The resource classes NuGet chose (`null`: the service index has none of that kind). */
  readonly resources: { findPackageById: string; packageMetadata: string | null; vulnerabilityInfo: string | null };
  /** Per id asked, the normalized versions of the flat container and of registration. */
  readonly ids: readonly { id: string; flat: string[]; registration: string[] }[];
  readonly versions: readonly FeedVersion[];
  /** VulnerabilityInfo problems (what restore reports as NU1900). */
  readonly vulnerabilityErrors: readonly string[];
}

/** A temporary folder for one dotnet call, removed after it. */
async function withScratch<T>(use: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-interop-'));
  try {
    return await use(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function probe(args: readonly string[], input?: string): Promise<unknown[]> {
  return withScratch(async (dir) => {
    const env = dotnetEnvironment({
      NUGET_HTTP_CACHE_PATH: join(dir, 'http-cache'),
      NUGET_PACKAGES: join(dir, 'packages'),
    });
    const result = await runDotnet([inject('probeDll'), ...args], { env, ...(input === undefined ? {} : { input }) });
    if (result.code !== 0)
      throw new Error(`probe ${args.join(' ')} exited ${result.code}:\n${result.stderr}${result.stdout}`);
    return result.stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as unknown);
  });
}

/** NuGet.Versioning 8.0.0's `TryParse`, normalized form, identity key and `VersionComparer.Default` order of `inputs`. */
export async function probeVersions(inputs: readonly string[]): Promise<NuGetVersionAnswers> {
  const lines = await probe(['versions'], inputs.map((input) => `${JSON.stringify(input)}\n`).join(''));
  const last = lines.pop() as { order?: number[][] } | undefined;
  if (!last?.order || lines.length !== inputs.length)
    throw new Error(`probe versions: ${lines.length} answers for ${inputs.length} inputs`);
  return { answers: lines as NuGetVersionAnswer[], order: last.order };
}

/** The feed whose service index is `serviceIndexUrl`, read by NuGet.Protocol for `ids`. */
export async function probeFeed(serviceIndexUrl: string, ids: readonly string[]): Promise<FeedReading> {
  const lines = (await probe(['feed', serviceIndexUrl, ...ids])) as { kind: string }[];
  const of = <T>(kind: string): T[] =>
    lines.filter((line) => line.kind === kind).map(({ kind: _, ...rest }) => rest as T);
  const [resources] = of<FeedReading['resources']>('resources');
  if (!resources) throw new Error(`probe feed ${serviceIndexUrl}: no resources line`);
  return {
    resources,
    ids: of<FeedReading['ids'][number]>('id'),
    versions: of<FeedVersion>('version'),
    vulnerabilityErrors: of<{ message: string }>('vulnerabilityError').map((line) => line.message),
  };
}
