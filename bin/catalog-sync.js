#!/usr/bin/env node
// The compiled CLI (npm ci builds it through the prepare script).
// The AWS SDK warns on every run under Node 20 that its 2027 releases will need Node 22; the README says
// so once, and the CLI's output stays clean for scripts. Set the variable to "false" to see it again.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const { main } = await import('../dist/lambda/cli.js');

process.exit(await main(process.argv));
