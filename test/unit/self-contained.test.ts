/**
 * A user's clone is the repository alone: no sibling folder of fixtures, no path of the machine it was
 * written on. Every tracked file is read, so a test, a comment or a results file that reaches outside
 * the clone fails here, not on a user's machine.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');

function trackedFiles(): string[] {
  try {
    return execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
  } catch {
    return []; // not a git checkout (an unpacked package): nothing tracked to check
  }
}

describe('the repository is self-contained', () => {
  const files = trackedFiles();
  // Built from parts so this file does not match itself.
  const sibling = ['..', 'shared', ''].join('/');
  const parent = dirname(root);
  const machinePath = parent === '/' ? undefined : `${parent}/`;

  it('no tracked file refers to a sibling shared folder or to the folder the clone sits in', () => {
    const offenders: string[] = [];
    for (const file of files) {
      let text: string;
      try {
        text = readFileSync(join(root, file), 'utf8');
      } catch {
        continue; // removed in the working tree
      }
      if (text.includes(sibling) || (machinePath !== undefined && text.includes(machinePath))) offenders.push(file);
    }
    expect(offenders).toEqual([]);
  });

  it('the fixtures the tests read are in the repository, with their sources', () => {
    const fixtures = files.filter((file) => file.startsWith('test/fixtures/'));
    expect(fixtures).toContain('test/fixtures/SOURCES.md');
    expect(fixtures).toContain('test/fixtures/kuuid-vectors.json');
    expect(fixtures.filter((file) => file.endsWith('.json')).length).toBeGreaterThan(50);
  });
});
