/**
 * The interoperability suite (`npm run test:interop`): NuGet's own code (the .NET SDK's `dotnet restore`, and
 * NuGet.Protocol / NuGet.Versioning 8.0.0 in the probe, test/interop/probe/) against what catalog-sync and its test
 * kit produce. Separate from `npm test` (vitest.config.ts does not include test/interop/), which needs only Node; it
 * needs the .NET SDK 10 and a NuGet source for the probe's packages (docs/development.md).
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export default defineConfig({
  test: {
    name: 'interop',
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/interop/**/*.test.ts'],
    // Checks the SDK (failing loudly without it) and builds the probe once per change of its sources.
    globalSetup: ['test/interop/probe-setup.ts'],
    setupFiles: ['testkit/quiet-stdout.ts', 'testkit/env-per-file.ts'],
    silent: 'passed-only',
    slowTestThreshold: 10_000,
    // A restore takes 2–5 s on the 2-core machine, more under load; the probe build up to a minute.
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: 'forks',
    // Most of the time is dotnet's CPU (restore, the probe): two files at once keep both cores busy.
    maxWorkers: 2,
  },
});
