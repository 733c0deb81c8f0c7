#!/usr/bin/env node
// @ts-check
/**
 * Bundles the compiled CLI (dist/lambda/cli.js, and the backfill and view rebuild workers it forks) into dist/cli/ with esbuild: one
 * minified CommonJS file per entry, so a command loads one file instead of some 300 (ours, zod's, undici's,
 * commander's): module loading was most of a local command's start-up. CommonJS, not ES modules: one file needs no
 * module resolution or linking, what a command does not use (zod, the stores of S3 and DynamoDB, the backfill's
 * workers) sits in functions that run on first use (esbuild wraps what is imported with `import()`), and
 * bin/catalog-sync.js can keep V8's compiled code of the file between runs (a code cache), which Node 20 offers for
 * no ES module. The AWS SDK stays outside (loaded from node_modules, and only by a command given
 * --cursor-table/--bucket or --state-machine). Run by `npm run build` after tsc.
 */
import { build } from 'esbuild';
import { rmSync, writeFileSync } from 'node:fs';
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
      /[\\/]commander[\\/]lib[\\/]command\.js$/.test(args.importer)
        ? { path: 'child_process', namespace: 'lazy-child-process' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'lazy-child-process' }, () => ({
      contents:
        "let real; module.exports = new Proxy({}, { get: (_, key) => (real ??= require('node:' + 'child_process'))[key] });",
      loader: 'js',
    }));
    build.onResolve({ filter: /^\.\/client-h2\.js$/ }, (args) =>
      /[\\/]undici[\\/]lib[\\/]dispatcher[\\/]client\.js$/.test(args.importer)
        ? { path: 'client-h2', namespace: 'lazy-undici-h2' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'lazy-undici-h2' }, () => ({
      contents:
        "module.exports = function connectH2(...args) { return require('undici/lib/dispatcher/client-h2.js')(...args); };",
      loader: 'js',
      resolveDir: repo,
    }));
  },
};
// Chunk names carry a hash: clear the last build's, or they pile up in dist/cli and in the package.
rmSync(new URL('../dist/cli', import.meta.url), { recursive: true, force: true });

await build({
  absWorkingDir: repo,
  entryPoints: {
    cli: 'dist/lambda/cli.js',
    'backfill-child': 'dist/lambda/backfill/cli/backfill-child.js',
    'view-rebuild-child': 'dist/lambda/view/cli/view-rebuild-child.js',
  },
  outdir: 'dist/cli',
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  minify: true,
  // Error messages and stack traces keep their names (the CLI prints error.name in places).
  keepNames: true,
  external: ['@aws-sdk/*', '@smithy/*'],
  // `import()` of node's own modules becomes require(): the code cache of bin/catalog-sync.js cannot take a
  // dynamic import callback along on Node 20 ("A dynamic import callback was not specified"), and a require() of
  // one of node's modules is the same module.
  supported: { 'dynamic-import': false },
  // backfill.ts and view-rebuild.ts find their workers' files next to their own.
  define: { 'import.meta.url': '__catalogSyncModuleUrl' },
  banner: { js: "var __catalogSyncModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
  plugins: [lazyModules],
  logLevel: 'warning',
});
// The package is "type": "module"; these two files are CommonJS.
writeFileSync(new URL('../dist/cli/package.json', import.meta.url), '{ "type": "commonjs" }\n');
