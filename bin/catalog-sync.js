#!/usr/bin/env node
// The compiled CLI (npm ci builds it through the prepare script).
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
// Node 22 and later keep the compiled code of the bundle between runs (a cache in the system's temp folder):
// a command then starts in about half the CPU. Node 20 has no such cache.
(await import('node:module')).default.enableCompileCache?.();
// The bundle of the CLI (scripts/bundle-cli.mjs): a few files to load instead of some 300.
const { main } = await import('../dist/cli/cli.js');

process.exit(await main(process.argv));
