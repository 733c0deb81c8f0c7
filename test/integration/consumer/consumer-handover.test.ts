/**
 * One active instance per named consumer, and a hand-over after `kill -9` (issue 29, part 5): two `changes --follow
 * --consumer` processes of one name while the mirror grows; the second stands by (it writes nothing while the first
 * lives), the first is killed with SIGKILL mid-stream, the second takes over, and together they deliver every commit
 * in order. What is handled twice is only what the first handled after its last checkpoint: at most the commit in
 * flight with `--checkpoint-every 1` (S3 + DynamoDB), at most the checkpoint backlog (4 × 64 commits) at the defaults
 * (the folder).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { commitKeyOf } from '../../../lambda/contract/keys.js';
import { generateCatalog } from '../../../testkit/catalog-generator.js';
import { CLI, waitFor } from '../../../testkit/cli-process.js';
import { mulberry32 } from '../../../testkit/prng.js';
import { openViewTarget, type ViewTestTarget } from '../../../testkit/view-harness.js';
import { writeManifests } from './consumer-kit.js';

/** A `changes` process and what it wrote. */
interface Instance {
  readonly child: ChildProcess;
  readonly lines: string[];
  stderr: string;
  readonly closed: Promise<void>;
}

function start(target: ViewTestTarget, extra: readonly string[]): Instance {
  const args = [
    'changes',
    ...target.cli.args,
    '--follow',
    '--poll-interval',
    '0.05',
    '--consumer',
    'handed-over',
    '--json',
    '--checkpoint-on-write',
    ...extra,
  ];
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, ...target.cli.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const instance: Instance = {
    child,
    lines: [],
    stderr: '',
    closed: new Promise((resolve) => child.on('close', () => resolve())),
  };
  child.stderr!.on('data', (chunk: Buffer) => (instance.stderr += chunk.toString()));
  createInterface({ input: child.stdout! }).on('line', (line) =>
    instance.lines.push((JSON.parse(line) as { commitKey: string }).commitKey),
  );
  return instance;
}

const CASES = [
  { kind: 'S3 + DynamoDB', extra: ['--checkpoint-every', '1'], bound: 1 },
  // At the defaults: never more than 4 checkpoints' worth (4 × 64) handled and not yet checkpointed.
  { kind: 'local folder', extra: [], bound: 256 },
] as const;

describe.each(CASES)('hand-over after kill -9: $kind $extra', ({ kind, extra, bound }) => {
  const targets: ViewTestTarget[] = [];
  afterAll(() => targets.forEach((target) => target.close()));

  it('the standby writes nothing while the active one lives, takes over when it is killed, and repeats only what followed its last checkpoint', async () => {
    const target = await openViewTarget(kind);
    targets.push(target);
    const catalog = generateCatalog({ commits: 120, seed: 120, leavesPerCommit: [1, 4] });
    const all = catalog.commits.map((commit) => commitKeyOf(commit.timestamp));
    const random = mulberry32(kind.length);
    let written = 0;
    const grow = async (): Promise<void> => {
      const next = Math.min(all.length, written + random.int(1, 40));
      await writeManifests(target.store, '', catalog.commits.slice(0, next));
      written = next;
    };
    await grow();
    const a = start(target, extra);
    await waitFor(() => a.lines.length > 0, 'the first instance to deliver');
    const b = start(target, extra);
    await waitFor(() => b.stderr.includes('standing by'), 'the second instance to stand by');
    const killAfter = random.int(written + 1, 90);
    while (a.lines.length < killAfter) {
      await grow();
      await waitFor(() => a.lines.length >= Math.min(written, killAfter), 'the first instance to follow');
    }
    a.child.kill('SIGKILL');
    await a.closed;
    // While the first one lived, the second delivered nothing.
    expect(b.lines).toEqual([]);
    while (written < all.length) await grow();
    await waitFor(() => b.lines.at(-1) === all.at(-1), 'the second instance to take over and reach the head');
    b.child.kill('SIGTERM');
    await b.closed;
    expect(b.stderr).toContain('taken over from');
    // Each in order, from the start and from right after the first one's last checkpoint.
    expect(a.lines).toEqual(all.slice(0, a.lines.length));
    const twice = a.lines.filter((key) => b.lines.includes(key)).length;
    expect(b.lines).toEqual(all.slice(a.lines.length - twice));
    expect(twice).toBeLessThanOrEqual(bound);
  });
});
