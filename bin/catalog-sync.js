#!/usr/bin/env node
// The compiled CLI (`npm run build`, which npm test, npm start, npm run demo and npm pack run first). CommonJS
// (bin/package.json), as the bundle is: a command that needs no ES module never starts Node's ES module loader.
'use strict';
const {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} = require('node:fs');
const { createRequire } = require('node:module');
const { tmpdir } = require('node:os');
const { dirname, join } = require('node:path');
const { Script } = require('node:vm');

// The AWS SDK warns on every run under Node 20 that its 2027 releases will need Node 22; the README says
// so once, and the CLI's output stays clean for scripts. Set the variable to "false" to see it again.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// A reader that stops reading (`catalog-sync runs | head`) closes the pipe: what is left unprinted was not
// wanted, so quit quietly, as other command-line tools do, instead of crashing on EPIPE. (A run stopped this
// way is safe: the cursor moves only after the commits before it are stored.)
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
}

// undici's HTTP parser is WebAssembly, which V8 compiles again with TurboFan once it has run a little: ~90 ms of
// CPU a command pays and waits for at exit (lambda/runtime/wasm-tiering.ts says more; the budget is its
// WASM_TIERING_BUDGET). Set before the bundle is compiled: V8 refuses a code cache made under other flags.
// Not for the commands that make no request (a flag set at run time costs Node's own modules their code cache, ~0.03
// CPU-s), nor when the process was given its own budget.
const requestless = new Set([undefined, '--version', '-V', '--help', '-h', 'help', 'keys']);
if (!requestless.has(process.argv[2]) && !process.execArgv.some((arg) => /^--wasm[-_]tiering[-_]budget/.test(arg))) {
  // V8 refuses Node's built-in code cache for whatever is compiled after a flag changes: Node's own modules that such
  // a command loads anyway (a no-op `run` loads these) are loaded first, so that they keep it (~0.02 CPU-s).
  for (const id of [
    'assert',
    'console',
    'crypto',
    'diagnostics_channel',
    'fs/promises',
    'http',
    'net',
    'timers/promises',
    'zlib',
  ]) {
    require(`node:${id}`);
  }
  require('node:v8').setFlagsFromString('--wasm-tiering-budget=100000000');
}

// The bundle of the CLI (scripts/bundle-cli.mjs): one CommonJS file. A checkout has it only once built (an installed
// package always has it).
const bundle = join(__dirname, '..', 'dist', 'cli', 'cli.js');
if (!existsSync(bundle)) {
  process.stderr.write(`catalog-sync: ${bundle} is missing: in a checkout, run \`npm run build\` first\n`);
  process.exit(2);
}
const cli = loadWithCodeCache(bundle);
cli.exports.main(process.argv).then((code) => {
  cli.saveCodeCache();
  process.exit(code);
});

/**
 * Loads the bundle as Node loads a CommonJS file, but keeps V8's compiled code of it between runs (a code cache, as
 * Node 22's module.enableCompileCache() does for modules, which Node 20 lacks): a command then starts in about a
 * third less CPU. The cache is a file per user in the system's temp folder, named after the bundle, its size and
 * time, Node's version and the CPU; V8 checks it is for this very source and V8 and ignores it otherwise.
 * NODE_DISABLE_COMPILE_CACHE=1 (Node's own switch for its compile cache) turns it off.
 */
function loadWithCodeCache(filename) {
  const source = readFileSync(filename, 'utf8');
  const cacheFile = codeCacheFile(filename);
  const cachedData = cacheFile === undefined ? undefined : readCache(cacheFile);
  const wrapper = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename,
    ...(cachedData === undefined ? {} : { cachedData }),
  });
  const module = { exports: {} };
  wrapper.runInThisContext()(module.exports, createRequire(filename), module, filename, dirname(filename));
  return {
    exports: module.exports,
    // After the command ran: the functions it compiled are in the cache too. Written when there was none or V8
    // refused it (another build, another Node); any failure only means no cache next time.
    saveCodeCache() {
      if (cacheFile === undefined || (cachedData !== undefined && !wrapper.cachedDataRejected)) return;
      try {
        const temporary = `${cacheFile}.${process.pid}`;
        const fd = openSync(temporary, 'w', 0o600);
        try {
          writeSync(fd, wrapper.createCachedData());
        } finally {
          closeSync(fd);
        }
        renameSync(temporary, cacheFile);
        // The caches of this command from earlier builds (or Nodes) are of no more use.
        const folder = dirname(cacheFile);
        const prefix = cacheFile.slice(folder.length + 1).replace(/@[^@]*$/, '@');
        for (const name of readdirSync(folder)) {
          if (name.startsWith(prefix) && join(folder, name) !== cacheFile) rmSync(join(folder, name), { force: true });
        }
      } catch {
        // No cache: the next command compiles the bundle again.
      }
    },
  };
}

/** The cache file of `filename`, in a folder of this user's only; undefined when the cache is off or cannot be. */
function codeCacheFile(filename) {
  if (process.env.NODE_DISABLE_COMPILE_CACHE === '1') return undefined;
  try {
    const { size, mtimeMs } = statSync(filename);
    const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
    const folder = join(tmpdir(), `catalog-sync-code-cache${uid === undefined ? '' : `-${uid}`}`);
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    // A folder another user made (a shared temp folder) is not trusted: its cache would be their code.
    const owner = statSync(folder);
    if (uid !== undefined && (owner.uid !== uid || (owner.mode & 0o022) !== 0)) return undefined;
    // One cache per command: each holds the code its command compiled (`run` compiles much that `--version` never
    // does), and a cache V8 accepts is never rewritten.
    const command = /^[a-z][a-z-]{0,30}$/.test(process.argv[2] ?? '') ? process.argv[2] : 'other';
    const key = [size, Math.trunc(mtimeMs), process.version, process.arch].join('-');
    return join(folder, `${filename.replace(/[^A-Za-z0-9]+/g, '_').slice(-80)}.${command}@${key}.bin`);
  } catch {
    return undefined;
  }
}

function readCache(file) {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}
