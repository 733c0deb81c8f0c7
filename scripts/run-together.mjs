#!/usr/bin/env node
// @ts-check
/**
 * Runs npm scripts at the same time and fails if any fails: `npm test`'s build, type-check and lint, which do not
 * depend on each other (the type-check emits nothing, the linter skips dist/), take turns on 2 cores when run one
 * after another. Each script's output is held and printed whole when it ends, so outputs do not interleave.
 *
 *   node scripts/run-together.mjs build typecheck lint
 */
import { spawn } from 'node:child_process';

const names = process.argv.slice(2);
if (names.length === 0) {
  process.stderr.write('usage: node scripts/run-together.mjs <npm script>...\n');
  process.exit(2);
}
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const results = await Promise.all(
  names.map(
    (name) =>
      new Promise((resolve) => {
        const chunks = [];
        const child = spawn(npm, ['run', name], {
          stdio: ['ignore', 'pipe', 'pipe'],
          shell: process.platform === 'win32',
        });
        child.stdout.on('data', (chunk) => chunks.push(chunk));
        child.stderr.on('data', (chunk) => chunks.push(chunk));
        child.on('error', (error) => resolve({ name, code: 1, output: Buffer.from(`${error.message}\n`) }));
        child.on('close', (code, signal) => {
          const output = Buffer.concat(chunks);
          process.stdout.write(output);
          resolve({ name, code: code ?? (signal ? 1 : 0), output });
        });
      }),
  ),
);
const failed = results.filter((result) => result.code !== 0);
for (const { name, code } of failed) process.stderr.write(`npm run ${name} failed (exit ${code})\n`);
process.exit(failed.length === 0 ? 0 : 1);
