/**
 * `dotnet restore` of a generated test project against one feed, as a user of that feed would run it, with nothing
 * else to fall back on: a NuGet.Config with `<clear/>` and only that source (`allowInsecureConnections`, which an
 * `http://` source needs since .NET 9, loopback included), a fresh global packages folder and a fresh http-cache
 * (NuGet serves both from cache without asking the feed again, `--no-http-cache` notwithstanding). The answer is read
 * from `obj/project.assets.json` (the graph, each package's SHA512, the folders and sources used, and the warnings and
 * errors as structured data), the console text kept for failure messages.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dotnetEnvironment, runDotnet } from './dotnet-process.js';

/** What {@link restoreProject} restores. */
export interface RestoreOptions {
  /** The feed's service index URL, the project's only source. */
  readonly feedUrl: string;
  /** PackageReferences: id → version or range (`1.0.0` means at least 1.0.0, `[1.0.0]` exactly). */
  readonly references: Readonly<Record<string, string>>;
  /** Also name the feed in `<auditSources>` (NuGet then says NU1905 when the feed has no vulnerability data). */
  readonly auditSource?: boolean;
  /** Extra MSBuild properties of the project, e.g. `{ NuGetAudit: 'false' }`. */
  readonly properties?: Readonly<Record<string, string>>;
}

/** One warning or error of a restore, as `project.assets.json` records it. */
export interface RestoreLog {
  readonly code: string;
  readonly level: string;
  readonly message: string;
  readonly libraryId?: string;
}

/** What a restore did. */
export interface RestoreResult {
  /** `dotnet restore`'s exit code. */
  readonly exitCode: number;
  /** Its console output (for messages; assert on the structured fields). */
  readonly output: string;
  /** `targets["net10.0"]`'s keys: the restored graph as `Id/version`, sorted. */
  readonly graph: readonly string[];
  /** `libraries`: `Id/version` → its SHA512 (base64) as restored. */
  readonly sha512: Readonly<Record<string, string>>;
  /** `packageFolders`: where packages were extracted (the fresh folder alone, when isolated). */
  readonly packageFolders: readonly string[];
  /** `project.restore.sources`: the sources restore used. */
  readonly sources: readonly string[];
  readonly logs: readonly RestoreLog[];
  /** The global packages folder given to this restore (removed after it). */
  readonly packagesFolder: string;
  /** The whole `project.assets.json` (empty when restore wrote none), for what the fields above leave out. */
  readonly assets: Readonly<Record<string, unknown>>;
}

const TARGET_FRAMEWORK = 'net10.0';

const xml = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function writeProject(dir: string, options: RestoreOptions): void {
  const properties = Object.entries(options.properties ?? {})
    .map(([name, value]) => `    <${name}>${xml(value)}</${name}>\n`)
    .join('');
  const references = Object.entries(options.references)
    .map(([id, version]) => `    <PackageReference Include="${xml(id)}" Version="${xml(version)}" />\n`)
    .join('');
  writeFileSync(
    join(dir, 'interop.csproj'),
    `<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <TargetFramework>${TARGET_FRAMEWORK}</TargetFramework>
${properties}  </PropertyGroup>
  <ItemGroup>
${references}  </ItemGroup>
</Project>
`,
  );
  const audit = options.auditSource
    ? `  <auditSources>\n    <clear />\n    <add key="feed" value="${xml(options.feedUrl)}" allowInsecureConnections="true" />\n  </auditSources>\n`
    : '';
  writeFileSync(
    join(dir, 'NuGet.Config'),
    `<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <packageSources>
    <clear />
    <add key="feed" value="${xml(options.feedUrl)}" allowInsecureConnections="true" />
  </packageSources>
${audit}</configuration>
`,
  );
}

interface Assets {
  targets?: Record<string, Record<string, unknown>>;
  libraries?: Record<string, { sha512?: string }>;
  packageFolders?: Record<string, unknown>;
  project?: { restore?: { sources?: Record<string, unknown> } };
  logs?: RestoreLog[];
}

/**
 * Restores a new net10.0 project referencing `options.references` from `options.feedUrl` alone, with fresh caches.
 * A failed restore is a result (its `exitCode` and `logs` say why), not an error.
 */
export async function restoreProject(options: RestoreOptions): Promise<RestoreResult> {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-restore-'));
  try {
    const project = join(dir, 'project');
    const packagesFolder = join(dir, 'packages');
    mkdirSync(project);
    writeProject(project, options);
    const env = dotnetEnvironment({ NUGET_PACKAGES: packagesFolder, NUGET_HTTP_CACHE_PATH: join(dir, 'http-cache') });
    const result = await runDotnet(['restore', project], { env, cwd: project });
    const assetsFile = join(project, 'obj/project.assets.json');
    const assets = existsSync(assetsFile) ? (JSON.parse(readFileSync(assetsFile, 'utf8')) as Assets) : {};
    const libraries = assets.libraries ?? {};
    return {
      exitCode: result.code,
      output: result.stdout + result.stderr,
      graph: Object.keys(assets.targets?.[TARGET_FRAMEWORK] ?? {}).sort(),
      sha512: Object.fromEntries(Object.entries(libraries).map(([name, library]) => [name, library.sha512 ?? ''])),
      packageFolders: Object.keys(assets.packageFolders ?? {}).map((folder) => folder.replace(/[/\\]$/, '')),
      sources: Object.keys(assets.project?.restore?.sources ?? {}),
      logs: assets.logs ?? [],
      packagesFolder,
      assets: assets as Record<string, unknown>,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
