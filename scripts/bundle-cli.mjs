#!/usr/bin/env node
// @ts-check
/**
 * Bundles the compiled CLI (dist/lambda/cli.js, and the backfill worker it forks) into dist/cli/ with esbuild:
 * one minified ES module per entry and shared chunks, so a command loads a few files instead of some 300 (ours,
 * zod's, undici's, commander's): module loading was most of a local command's start-up. The AWS SDK stays
 * outside (loaded from node_modules, and only by a command given --cursor-table/--bucket or --state-machine).
 * Run by `npm run build` after tsc; bin/catalog-sync.js loads dist/cli/cli.js.
 */
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('..', import.meta.url));
// Chunk names carry a hash: clear the last build's, or they pile up in dist/cli and in the package.
rmSync(new URL('../dist/cli', import.meta.url), { recursive: true, force: true });

await build({
  absWorkingDir: repo,
  entryPoints: { cli: 'dist/lambda/cli.js', 'backfill-child': 'dist/lambda/cli/backfill-child.js' },
  outdir: 'dist/cli',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  minify: true,
  // Error messages and stack traces keep their names (the CLI prints error.name in places).
  keepNames: true,
  external: ['@aws-sdk/*', '@smithy/*'],
  // CommonJS dependencies (undici, commander) call require(): give the ES modules one.
  banner: { js: "import { createRequire as __catalogSyncRequire } from 'node:module'; const require = __catalogSyncRequire(import.meta.url);" },
  logLevel: 'warning',
});
