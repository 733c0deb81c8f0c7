/**
 * The house is a test: `npm run house -- --strict` (scripts/house.mjs) over the tree must find no import that
 * breaks a rule of scripts/house-rules.mjs (errors or warnings), no loop between files, no `process`/`console` in a
 * wing's engine, no file of lambda/ on no floor, and no source file over 400 lines. On failure the message lists the
 * offending lines of the report.
 *
 * And each clause of the rule is seen to fail: a small house of its own (the ground, the runtime kit, three wings
 * with their faces, the program, infra) that keeps every rule, then one hand-made violation at a time, checked with
 * the same two scripts.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const SUMMARY =
  /^house: (\d+) imports break error-level rules, (\d+) warnings, (\d+) cycles, (\d+) uses of the shell in the engines, (\d+) files on no floor, (\d+) files over (\d+) lines$/m;

/** The report's sections by title (`# Title`), each as its non-empty lines. */
function sections(report: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of report.split('\n')) {
    if (line.startsWith('# ')) found.set(line.slice(2), (current = []));
    else if (current && line.trim() !== '' && !line.startsWith('house: ')) current.push(line.trim());
  }
  return found;
}

/** The lines of the report that say what is wrong: broken imports, loops, shell uses, unplaced files, files over the limit. */
function offending(report: string): string[] {
  const lines: string[] = [];
  for (const [title, body] of sections(report)) {
    if (
      ['Imports that break them', 'Cycles', 'The engines and the shell', 'Files of lambda/ on no floor'].some((start) =>
        title.startsWith(start),
      )
    ) {
      lines.push(...body.filter((line) => line !== 'none').map((line) => `${title.split(' (')[0]}: ${line}`));
    } else if (title.startsWith('Largest source files')) {
      lines.push(...body.filter((line) => line.includes(' OVER ')).map((line) => `too long: ${line}`));
    }
  }
  return lines;
}

function house(cwd: string, ...args: string[]): { status: number | null; report: string; problems: string[] } {
  const run = spawnSync(process.execPath, [join(cwd, 'scripts/house.mjs'), '--strict', '--top', '0', ...args], {
    cwd,
    encoding: 'utf8',
  });
  expect(
    SUMMARY.test(run.stdout),
    `no summary line in the report (exit ${run.status}):\n${run.stdout}\n${run.stderr}`,
  ).toBe(true);
  return { status: run.status, report: run.stdout, problems: offending(run.stdout) };
}

describe('the house (scripts/house.mjs --strict)', () => {
  it('has no broken rule, no warning, no loop, no shell in an engine, no file on no floor and no source file over 400 lines', () => {
    const { status, report, problems } = house(root);
    const [, errors, warnings, cycles, shellUses, unplaced, oversized, limit] = SUMMARY.exec(report)!.map(Number);
    expect(limit).toBe(400);
    const counts = { errors, warnings, cycles, shellUses, unplaced, oversized };
    expect(counts, problems.join('\n')).toEqual({
      errors: 0,
      warnings: 0,
      cycles: 0,
      shellUses: 0,
      unplaced: 0,
      oversized: 0,
    });
    expect(problems).toEqual([]);
    expect(status).toBe(0);
  });
});

/** A house that keeps every rule: each floor, three wings along the graph (backfill -> sync, view -> consumer), faces. */
const GOOD_HOUSE: Record<string, string> = {
  'lambda/contract/index.ts': 'export const A = 1;\n',
  'lambda/ids/kuuid.ts': "import { A } from '../contract/index.js';\nexport const id = A;\n",
  'lambda/stores/store.ts': "import { A } from '../contract/index.js';\nexport const store = A;\n",
  'lambda/catalog/client.ts': "import { A } from '../contract/index.js';\nexport const client = A;\n",
  'lambda/runtime/settings.ts':
    "import { A } from '../contract/index.js';\nexport const settings = () => process.env.X ?? A;\n",
  'lambda/sync/engine.ts':
    "import { store } from '../stores/store.js';\nimport { client } from '../catalog/client.js';\nexport const run = () => store + client;\n",
  'lambda/sync/index.ts': "export { run } from './engine.js';\n",
  'lambda/sync/lambda.ts':
    "import { run } from './index.js';\nimport { settings } from '../runtime/settings.js';\nexport const handler = () => run() + settings() + Number(process.env.Y);\n",
  'lambda/sync/cli/run.ts':
    "import { run } from '../index.js';\nimport { settings } from '../../runtime/settings.js';\nexport const command = () => console.log(run(), settings());\n",
  'lambda/backfill/plan.ts': "import { run } from '../sync/index.js';\nexport const plan = () => run();\n",
  'lambda/backfill/lambda/worker.ts':
    "import { plan } from '../plan.js';\nimport { settings } from '../../runtime/settings.js';\nexport const handler = () => plan() + settings();\n",
  'lambda/consumer/reader.ts': "import { store } from '../stores/store.js';\nexport const read = () => store;\n",
  'lambda/view/index.ts': "import { read } from '../consumer/reader.js';\nexport const view = () => read();\n",
  'lambda/cli.ts': "import { command } from './sync/cli/run.js';\ncommand();\n",
  'lambda/index.ts': "export { run } from './sync/index.js';\nexport { view } from './view/index.js';\n",
  'infra/stack.ts': "import { A } from '../lambda/contract/index.js';\nexport const stack = A;\n",
};

/** One hand-made violation per clause of the rule, and what the report must name. */
const VIOLATIONS: { clause: string; files: Record<string, string>; names: string }[] = [
  {
    clause: 'the ground imports the runtime kit',
    files: {
      'lambda/stores/bad.ts': "import { settings } from '../runtime/settings.js';\nexport const x = settings;\n",
    },
    names: 'stores-imports-no-higher-floor',
  },
  {
    clause: 'the runtime kit imports a wing',
    files: { 'lambda/runtime/bad.ts': "import { run } from '../sync/index.js';\nexport const x = run;\n" },
    names: 'runtime-imports-no-higher-floor',
  },
  {
    clause: 'a wing imports the program',
    files: { 'lambda/view/bad.ts': "import { run } from '../index.js';\nexport const x = run;\n" },
    names: 'view-imports-no-higher-floor',
  },
  {
    clause: "a wing's engine names process",
    files: { 'lambda/sync/bad.ts': 'export const x = process.env.X;\n' },
    names: 'lambda/sync/bad.ts:1: export const x = process.env.X;',
  },
  {
    clause: "a wing's engine names console",
    files: { 'lambda/consumer/bad.ts': "export const x = () => console.log('x');\n" },
    names: 'lambda/consumer/bad.ts:1:',
  },
  {
    clause: "a wing's engine imports a shell module",
    files: { 'lambda/backfill/bad.ts': "import { spawn } from 'node:child_process';\nexport const x = spawn;\n" },
    names: 'engines-know-no-shell',
  },
  {
    clause: "a wing's engine imports the runtime kit",
    files: {
      'lambda/backfill/bad.ts': "import { settings } from '../runtime/settings.js';\nexport const x = settings;\n",
    },
    names: 'backfill-engine-knows-no-face',
  },
  {
    clause: "a wing's engine imports its own face",
    files: { 'lambda/sync/bad.ts': "import { command } from './cli/run.js';\nexport const x = command;\n" },
    names: 'sync-engine-knows-no-face',
  },
  {
    clause: 'a wing imports a wing off the graph (engine)',
    files: { 'lambda/sync/bad.ts': "import { plan } from '../backfill/plan.js';\nexport const x = plan;\n" },
    names: 'sync-imports-no-other-wing',
  },
  {
    clause: 'a wing imports a wing off the graph (face)',
    files: { 'lambda/consumer/lambda.ts': "import { view } from '../view/index.js';\nexport const handler = view;\n" },
    names: 'consumer-imports-no-other-wing',
  },
  {
    clause: "a wing imports a wing against the graph's direction",
    files: { 'lambda/backfill/bad.ts': "import { view } from '../view/index.js';\nexport const x = view;\n" },
    names: 'backfill-imports-only-sync',
  },
  {
    clause: 'a circle',
    files: {
      'lambda/sync/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
      'lambda/sync/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
    },
    names: 'lambda/sync/a.ts -> lambda/sync/b.ts -> lambda/sync/a.ts',
  },
  {
    clause: 'infra imports more than the contract',
    files: { 'infra/bad.ts': "import { run } from '../lambda/sync/index.js';\nexport const x = run;\n" },
    names: 'infra-knows-only-the-contract',
  },
  {
    clause: "the program imports a wing's engine past its faces",
    files: { 'lambda/cli.ts': "import { run } from './sync/engine.js';\nrun();\n" },
    names: 'program-through-faces',
  },
  {
    clause: 'a product outside the wings (lambda/ root)',
    files: { 'lambda/feed-lambda.ts': 'export const handler = () => 1;\n' },
    names: 'lambda/feed-lambda.ts',
  },
  {
    clause: 'a product outside the wings (a folder not in the graph)',
    files: { 'lambda/mirror/lambda.ts': 'export const handler = () => 1;\n' },
    names: 'lambda/mirror/lambda.ts',
  },
];

describe('the house rules, each broken by hand in a small house', () => {
  let dir: string;
  const writeAll = (files: Record<string, string>) => {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'house-'));
    mkdirSync(join(dir, 'scripts'));
    for (const script of ['house.mjs', 'house-rules.mjs', 'house-source.mjs'])
      copyFileSync(join(root, 'scripts', script), join(dir, 'scripts', script));
    expect(spawnSync('git', ['init', '-q'], { cwd: dir }).status).toBe(0);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps every rule as it is built', () => {
    writeAll(GOOD_HOUSE);
    const { status, problems } = house(dir);
    expect(problems).toEqual([]);
    expect(status).toBe(0);
  });

  it.each(VIOLATIONS)('fails when $clause', ({ files, names }) => {
    writeAll(files);
    try {
      const { status, problems } = house(dir);
      expect(
        problems.some((line) => line.includes(names)),
        `${names} not in:\n${problems.join('\n')}`,
      ).toBe(true);
      expect(status).toBe(1);
    } finally {
      for (const path of Object.keys(files)) rmSync(join(dir, path));
      writeAll(GOOD_HOUSE);
    }
  });

  it('refuses a wing graph with a circle, or an edge to no wing', async () => {
    // The rules module is plain JavaScript: loaded by URL, it needs no declarations.
    const { wingOrder } = (await import(pathToFileURL(join(root, 'scripts/house-rules.mjs')).href)) as {
      wingOrder: (graph: Record<string, string[]>) => string[];
    };
    expect(() => wingOrder({ sync: [], feed: ['serve'], serve: ['feed'] })).toThrow(/circle: feed -> serve -> feed/);
    expect(() => wingOrder({ view: ['consumer'] })).toThrow(/view imports consumer, which is not a declared wing/);
    expect(wingOrder({ view: ['consumer'], consumer: [] })).toEqual(['consumer', 'view']);
  });
});
