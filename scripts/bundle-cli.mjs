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

/**
 * Two node modules that two CommonJS dependencies load at start-up for something catalog-sync never does, loaded on
 * first use instead (the bundle keeps the same code):
 *
 * undici's Client loads its HTTP/2 half (client-h2.js) at load, and with it node:http2 and node:tls: about 10 ms of
 * every command's start-up, for a protocol catalog-sync never offers (no dispatcher sets allowH2, so a connection
 * is always HTTP/1.1 and connectH2 is never called). This loads the same file on the first call instead; the bundle
 * still holds it, unchanged.
 *
 * commander loads node:child_process (and with it node:dgram and node:net's child sockets, about 5 ms) for
 * subcommands that are separate executables, which catalog-sync's are not: it gets an object that loads the
 * module on the first property read (`childProcess.spawn`, in commander's _executeSubCommand only).
 */
const lazyModules = {
  name: 'lazy-modules',
  setup(build) {
    build.onResolve({ filter: /^node:child_process$/ }, (args) =>
      /[\\/]commander[\\/]lib[\\/]command\.js$/.test(args.importer) ? { path: 'child_process', namespace: 'lazy-child-process' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'lazy-child-process' }, () => ({
      contents: "let real; module.exports = new Proxy({}, { get: (_, key) => (real ??= require('node:' + 'child_process'))[key] });",
      loader: 'js',
    }));
    build.onResolve({ filter: /^\.\/client-h2\.js$/ }, (args) =>
      /[\\/]undici[\\/]lib[\\/]dispatcher[\\/]client\.js$/.test(args.importer) ? { path: 'client-h2', namespace: 'lazy-undici-h2' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'lazy-undici-h2' }, () => ({
      contents: "module.exports = function connectH2(...args) { return require('undici/lib/dispatcher/client-h2.js')(...args); };",
      loader: 'js',
      resolveDir: repo,
    }));
  },
};
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
  plugins: [lazyModules],
  logLevel: 'warning',
});
