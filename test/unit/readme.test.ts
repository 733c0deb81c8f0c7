/**
 * The README is read by a newcomer top to bottom (issue 34): it is short, it leads with the offline demo before any
 * command that reads nuget.org and before any internals, it takes an operator to a private feed, and every link it
 * gives into docs/ (and to its own headings) lands on a file and a heading. docs/development.md keeps no count of
 * tests that the next test makes stale. Read from the files alone: no process, no network.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { headingAnchors, proseLines } from '../../scripts/markdown-anchors.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const lines = readme.split('\n');

/** Most lines the README may have (issue 34 asks for about 250). */
const MAX_LINES = 300;

/** Commands that read nuget.org (or the configured source): none may come before the demo. */
const NEEDS_INTERNET = [
  /\bnpm start\b/,
  /\bcatalog-sync (run|backfill|verify|retry-quarantine|feed|status)\b/,
  /\bnpx cdk (deploy|bootstrap)\b/,
];

/** Words of the engine's internals, which belong in docs/design.md and the other docs, never before the demo. */
const INTERNALS = [
  /hedged/i,
  /fsync/i,
  /\bNFS\b/,
  /If-Match/,
  /If-None-Match/,
  /heartbeat/i,
  /ReturnValuesOnConditionCheckFailure/,
  /100-ns ticks/,
  /token bucket/i,
  /86,400 PUTs/,
  /compare-and-set/i,
];

/** Each fenced code block's lines, with the line its fence opens on. */
function codeBlocks(text: string): { start: number; body: string[] }[] {
  const blocks: { start: number; body: string[] }[] = [];
  let open: { start: number; body: string[] } | undefined;
  text.split('\n').forEach((line, index) => {
    if (/^\s*```/.test(line)) {
      if (open) {
        blocks.push(open);
        open = undefined;
      } else open = { start: index, body: [] };
    } else open?.body.push(line);
  });
  return blocks;
}

/** The line of the first `## ` heading matching `pattern`, or -1. */
function headingLine(pattern: RegExp): number {
  return lines.findIndex((line) => line.startsWith('## ') && pattern.test(line));
}

/** The text of the `## ` section whose heading is `title`, up to the next `## `. */
function section(title: string): string {
  const start = lines.indexOf(`## ${title}`);
  if (start < 0) return '';
  const next = lines.findIndex((line, index) => index > start && line.startsWith('## '));
  return lines.slice(start, next < 0 ? undefined : next).join('\n');
}

describe('the README leads with the user (issue 34)', () => {
  it(`has at most ${MAX_LINES} lines`, () => {
    expect(lines.length, `README.md has ${lines.length} lines`).toBeLessThanOrEqual(MAX_LINES);
  });

  it('shows npm run demo in its first code block, before any command that reads nuget.org', () => {
    const first = codeBlocks(readme)[0];
    expect(first, 'README.md has no code block').toBeDefined();
    const body = first?.body ?? [];
    const demo = body.findIndex((line) => /\bnpm run demo\b/.test(line));
    expect(
      demo,
      `the first code block (line ${(first?.start ?? 0) + 1}) has no npm run demo:\n${body.join('\n')}`,
    ).not.toBe(-1);
    const online = body.findIndex((line) => NEEDS_INTERNET.some((command) => command.test(line)));
    if (online >= 0)
      expect(demo, `"${body[online]}" needs the internet and comes before the demo`).toBeLessThan(online);
  });

  it('has the demo as its first section, before any word of the internals', () => {
    const firstSection = lines.findIndex((line) => line.startsWith('## '));
    const demo = headingLine(/demo/i);
    expect(demo, 'no "## …demo…" section').toBeGreaterThanOrEqual(0);
    expect(demo, `the first section is "${lines[firstSection]}"`).toBe(firstSection);
    for (const word of INTERNALS) {
      const at = lines.findIndex((line) => word.test(line));
      if (at >= 0) expect(at, `line ${at + 1} speaks of ${word} before the demo`).toBeGreaterThan(demo);
    }
  });

  it('says which commands need the internet', () => {
    expect(readme).toMatch(/need the internet/);
  });

  it('has a section "A private feed" that goes from the feed to dotnet restore, with its cost per 1,000 packages', () => {
    const feed = section('A private feed');
    expect(feed, 'no "## A private feed" section').not.toBe('');
    expect(feed).toMatch(/catalog-sync feed\b/);
    expect(feed).toMatch(/catalog-sync serve\b/);
    expect(feed).toMatch(/nuget\.config/);
    expect(feed).toMatch(/dotnet (restore|add package)/);
    expect(feed).toMatch(/\$\d+(\.\d+)? per 1,000 packages/);
  });

  it('links only to files and headings that exist', () => {
    const broken: string[] = [];
    let checked = 0;
    proseLines(readme).forEach((line, index) => {
      for (const [, target] of line.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (!target || /^[a-z]+:/i.test(target)) continue; // https:, mailto:: not checked offline
        checked++;
        const [path = '', anchor] = target.split('#');
        const file = path === '' ? join(root, 'README.md') : join(root, decodeURIComponent(path));
        if (!existsSync(file)) broken.push(`README.md:${index + 1}: ${target}: no such file`);
        else if (anchor !== undefined && !statSync(file).isDirectory()) {
          if (!headingAnchors(readFileSync(file, 'utf8')).has(anchor))
            broken.push(`README.md:${index + 1}: ${target}: no heading #${anchor} in ${path || 'README.md'}`);
        }
      }
    });
    expect(broken).toEqual([]);
    expect(checked, 'relative links checked').toBeGreaterThan(10);
  });
});

describe('docs/development.md keeps no stale count (issue 34)', () => {
  it('states no number of tests or files of a run', () => {
    const development = readFileSync(join(root, 'docs/development.md'), 'utf8');
    expect(development).not.toMatch(/\d[\d,]* tests in \d+ files/);
  });
});

describe('README.md shows how to test', () => {
  it('shows the commands .ci/run runs (npm ci, npm test, the interop suite), each at the start of a line of a code block', () => {
    const ci = readFileSync(join(root, '.ci/run'), 'utf8');
    for (const command of ['npm ci', 'npm test', 'npm run test:interop']) {
      expect(ci, `.ci/run runs ${command}`).toContain(command);
      expect(
        lines.some((line) => line === command || line.startsWith(`${command} `)),
        `README shows ${command}`,
      ).toBe(true);
    }
  });
});
