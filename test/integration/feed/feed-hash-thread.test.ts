/**
 * The worker thread that hashes the larger packages (lambda/feed/off-thread-hash.ts) and a process's life, in a process
 * of its own running the built code: while a digest is awaited and nothing else is under way (a body read from
 * memory), the process stays alive and gets its answer; once no hash is under way, the worker keeps nothing alive and
 * the process ends by itself, as it would with no worker.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const built = fileURLToPath(new URL('../../../dist/lambda/feed/verified-body.js', import.meta.url));

const SCRIPT = `
import { createHash } from 'node:crypto';
const { verifiedBody, HASHED_OFF_THREAD_ABOVE } = await import(process.argv[1]);
const bytes = Buffer.alloc(HASHED_OFF_THREAD_ABOVE * 3 + 5, 7);
const hash = createHash('sha512').update(bytes).digest('base64');
async function* body() {
  for (let at = 0; at < bytes.length; at += 65536) yield bytes.subarray(at, at + 65536);
}
let size = 0;
for await (const piece of verifiedBody(body(), { hash, size: bytes.length }, 'memory')) size += piece.length;
console.log('checked', size);
`;

describe('the hashing thread and the process', () => {
  it('keeps the process alive for an awaited digest, and lets it end once none is', async () => {
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', SCRIPT, built], { timeout: 20_000 });
    expect(stdout.trim()).toBe(`checked ${1024 * 1024 * 3 + 5}`);
  });
});
