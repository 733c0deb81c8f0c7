/**
 * The house is a test: `npm run house -- --strict` (scripts/house.mjs) over the tree must find no import that
 * breaks a rule of scripts/house-rules.mjs (errors or warnings), no loop between files, no `process`/`console` in
 * the engine, and no source file over 400 lines. On failure the message lists the offending lines of the report.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const SUMMARY = /^house: (\d+) imports break error-level rules, (\d+) warnings, (\d+) cycles, (\d+) uses of the shell in the engine, (\d+) files over (\d+) lines$/m;

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

/** The lines of the report that say what is wrong: broken imports, loops, shell uses, files over the limit. */
function offending(report: string): string[] {
  const lines: string[] = [];
  for (const [title, body] of sections(report)) {
    if (title.startsWith('Imports that break them') || title.startsWith('Cycles') || title.startsWith('The engine and the shell')) {
      lines.push(...body.filter((line) => line !== 'none').map((line) => `${title.split(' (')[0]}: ${line}`));
    } else if (title.startsWith('Largest source files')) {
      lines.push(...body.filter((line) => line.includes(' OVER ')).map((line) => `too long: ${line}`));
    }
  }
  return lines;
}

describe('the house (scripts/house.mjs --strict)', () => {
  it('has no broken rule, no warning, no loop, no shell in the engine and no source file over 400 lines', () => {
    const run = spawnSync(process.execPath, ['scripts/house.mjs', '--strict', '--top', '0'], { cwd: root, encoding: 'utf8' });
    const report = run.stdout;
    const summary = SUMMARY.exec(report);
    expect(summary, `no summary line in the report (exit ${run.status}):\n${report}\n${run.stderr}`).not.toBeNull();
    const [, errors, warnings, cycles, shellUses, oversized, limit] = summary!.map(Number);
    expect(limit).toBe(400);
    const problems = offending(report);
    const counts = { errors, warnings, cycles, shellUses, oversized };
    expect(counts, `${summary![0]}\n${problems.join('\n')}`).toEqual({ errors: 0, warnings: 0, cycles: 0, shellUses: 0, oversized: 0 });
    expect(problems).toEqual([]);
    expect(run.status, run.stderr).toBe(0);
  });
});
