#!/usr/bin/env node
/**
 * `npm run house`: checks the code against the intended house (docs/development.md, "The house").
 *
 * Prints the floors (the ground, the runtime kit, each wing, the program) and the import edges between them, every
 * violation of the rules in house-rules.mjs, every cycle between files, uses of `process`/`console` in a wing's
 * engine, the files of lambda/ on no floor, and the largest source files.
 * It reports and exits 0; with `--strict` it exits 1 when an error-level rule is broken, a cycle exists, an
 * engine touches the shell, a file of lambda/ is on no floor, or a source file is over the line limit (warnings
 * never fail). `--root DIR` checks another checkout (the house test builds small houses that break one rule each).
 * test/unit/house.test.ts runs it with `--strict` and also wants no warning: the house is a test.
 *
 * It needs no dependency: the imports are found with regexes in the source with its comments blanked out
 * (`import ... from`, `import '...'`, `export ... from`, `import type`, `import('...')` with a literal).
 * A well-kept tool (dependency-cruiser) needs a real parser for TypeScript 7, and the one it can use (swc)
 * ships per-platform builds that the registry here lacks, which broke `npm ci` (docs/development.md).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { FLOORS, MUST_BE_PLACED, RULES, SHELL_FREE } from './house-rules.mjs';
import { lineCount, withoutComments } from './house-source.mjs';

const SOURCE_FOLDERS = ['lambda', 'infra', 'test', 'testkit', 'bench', 'chaos', 'scripts', 'bin'];
const SOURCE_FILE = /\.(ts|mts|cts|js|mjs|cjs)$/;
/** Generated or recorded data, not source: never counted. */
const NOT_SOURCE = /(^|\/)(node_modules|dist|cdk\.out|fixtures|results)(\/|$)/;
/** bin/ only loads dist/: its lines are counted, its imports are not part of the house. */
const NOT_IN_GRAPH = /^bin\//;
const MAX_LINES = 400;

const { values: flags } = parseArgs({
  options: {
    strict: { type: 'boolean', default: false },
    top: { type: 'string', default: '15' },
    root: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
const root = flags.root ?? fileURLToPath(new URL('..', import.meta.url));
if (flags.help) {
  console.log(`usage: npm run house [-- --strict] [-- --top N] [-- --root DIR]
  --strict   exit 1 on any error-level violation, cycle, shell use in an engine, file of lambda/ on no floor, or file over ${MAX_LINES} lines
  --root DIR the checkout to check (default: this script's)
  --top N    how many of the largest source files to list (default 15; every file over ${MAX_LINES} is listed)`);
  process.exit(0);
}
const top = Number(flags.top);
if (!Number.isInteger(top) || top < 0) {
  console.error(`--top: "${flags.top}" must be a whole number of files, 0 or more`);
  process.exit(2);
}

const floors = FLOORS.map((floor) => ({ ...floor, pattern: new RegExp(floor.path) }));
const floorOf = (path) => floors.find((floor) => floor.pattern.test(path));
const mustBePlaced = new RegExp(MUST_BE_PLACED);
const shellFree = new RegExp(SHELL_FREE);
const rules = RULES.map((rule) => ({
  ...rule,
  fromPath: rule.from.path ? new RegExp(rule.from.path) : null,
  toPath: rule.to.path ? new RegExp(rule.to.path) : null,
  toPathNot: rule.to.pathNot ? new RegExp(rule.to.pathNot) : null,
}));

const files = sourceFiles();
const texts = new Map(files.map((path) => [path, readFileSync(posix.join(root, path), 'utf8')]));
const code = new Map(files.map((path) => [path, withoutComments(texts.get(path))]));
const known = new Set(files);
/** Project files only: node's own modules and npm packages are not part of the house. */
const projectModules = files.filter((path) => !NOT_IN_GRAPH.test(path));
if (projectModules.length === 0) {
  console.error(`house: no module found under ${SOURCE_FOLDERS.join(', ')} (run it from a checkout of catalog-sync)`);
  process.exit(2);
}
/** path -> [{ to, core }]: each imported file (or node module) once per importing file. */
const graph = new Map(projectModules.map((path) => [path, importsOf(path)]));

printFloors();
printEdges();
const { errors, warnings } = printViolations();
const cycles = printCycles();
const shellUses = printShellUses();
const unplaced = printUnplaced();
const oversized = printLargestFiles();

const summaryLine =
  `house: ${errors} imports break error-level rules, ${warnings} warnings, ${cycles} cycles, ` +
  `${shellUses} uses of the shell in the engines, ${unplaced} files on no floor, ${oversized} files over ${MAX_LINES} lines`;
console.log(`\n${summaryLine}`);
const broken = errors + cycles + shellUses + unplaced + oversized > 0;
if (flags.strict && broken) process.exit(1);

function printFloors() {
  console.log('# Floors (top down; a file may import its own floor and lower ones)\n');
  for (const floor of floors) {
    const count = projectModules.filter((path) => floorOf(path) === floor).length;
    console.log(`  ${floor.rank}  ${floor.name.padEnd(9)} ${String(count).padStart(4)} files  ${floor.what}`);
  }
  const unplaced = projectModules.filter((path) => !floorOf(path) && !mustBePlaced.test(path));
  if (unplaced.length > 0) console.log(`\n  not on any floor yet: ${unplaced.join(', ')}`);
}

/** Files of lambda/ on no floor: the root holds only the program, and every product is a wing of the graph. */
function printUnplaced() {
  const unplaced = files.filter((path) => mustBePlaced.test(path) && !floorOf(path));
  console.log('\n# Files of lambda/ on no floor (a new product is a wing: a folder and a line in the wing graph)\n');
  console.log(unplaced.length === 0 ? '  none' : unplaced.map((path) => `  ${path}`).join('\n'));
  return unplaced.length;
}

function printEdges() {
  const edges = new Map();
  for (const [path, dependencies] of graph) {
    const from = floorOf(path);
    if (!from) continue;
    for (const dependency of dependencies) {
      if (dependency.core) continue;
      const to = floorOf(dependency.to);
      if (!to || to === from) continue;
      const key = `${from.name} -> ${to.name}`;
      const edge = edges.get(key) ?? { from, to, count: 0 };
      edge.count += 1;
      edges.set(key, edge);
    }
  }
  console.log('\n# Import edges between floors (file imports; "UP" = to a higher floor)\n');
  const sorted = [...edges.entries()].sort(([, a], [, b]) => b.from.rank - a.from.rank || b.to.rank - a.to.rank);
  for (const [key, edge] of sorted) {
    console.log(`  ${key.padEnd(22)} ${String(edge.count).padStart(4)}${edge.to.rank > edge.from.rank ? '  UP' : ''}`);
  }
}

/** Every import that breaks a rule (the rule against cycles aside: see printCycles). */
function violations() {
  const found = [];
  for (const [from, dependencies] of graph) {
    for (const rule of rules) {
      if (rule.to.circular || (rule.fromPath && !rule.fromPath.test(from))) continue;
      for (const dependency of dependencies) {
        if (Boolean(rule.to.core) !== dependency.core) continue;
        if (rule.toPath && !rule.toPath.test(dependency.to)) continue;
        if (rule.toPathNot?.test(dependency.to)) continue;
        found.push({ from, to: dependency.to, rule });
      }
    }
  }
  const order = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
  const rank = ({ rule }) => (rule.severity === 'error' ? 0 : 1);
  return found.sort(
    (a, b) => rank(a) - rank(b) || order(a.rule.name, b.rule.name) || order(a.from, b.from) || order(a.to, b.to),
  );
}

/** Each broken import once, with every rule it breaks; the rules first, with what they mean. */
function printViolations() {
  const broken = violations();
  const byRule = new Map();
  const imports = new Map();
  for (const { from, to, rule } of broken) {
    const { name, severity } = rule;
    byRule.set(name, { rule, count: (byRule.get(name)?.count ?? 0) + 1 });
    const key = `${from} -> ${to}`;
    const entry = imports.get(key) ?? { key, severity, rules: [] };
    if (severity === 'error') entry.severity = 'error';
    entry.rules.push(name);
    imports.set(key, entry);
  }
  console.log('\n# Rules broken\n');
  if (byRule.size === 0) console.log('  none');
  for (const [name, { rule, count }] of byRule) console.log(`  ${name} (${rule.severity}, ${count}): ${rule.comment}`);
  console.log('\n# Imports that break them (errors first)\n');
  if (imports.size === 0) console.log('  none');
  const sorted = [...imports.values()].sort((a, b) =>
    a.severity === b.severity ? 0 : a.severity === 'error' ? -1 : 1,
  );
  for (const entry of sorted) console.log(`  ${entry.severity.padEnd(5)}  ${entry.key}  [${entry.rules.join(', ')}]`);
  return {
    errors: sorted.filter((entry) => entry.severity === 'error').length,
    warnings: broken.filter(({ rule }) => rule.severity === 'warn').length,
  };
}

/**
 * Every import that lies on a loop closes one: for each, the shortest way back from the imported file to
 * the importer is a cycle. The same loop is found from each of its imports, so it is started at its
 * smallest file name and listed once.
 */
function printCycles() {
  const cycles = new Map();
  if (rules.some((rule) => rule.to.circular)) {
    for (const [from, dependencies] of graph) {
      for (const dependency of dependencies) {
        if (dependency.core) continue;
        const back = shortestPath(dependency.to, from);
        if (!back) continue;
        const loop = [from, ...back.slice(0, -1)];
        const start = loop.indexOf([...loop].sort()[0]);
        const rotated = [...loop.slice(start), ...loop.slice(0, start)];
        cycles.set(rotated.join(' -> '), rotated);
      }
    }
  }
  console.log('\n# Cycles between files\n');
  if (cycles.size === 0) console.log('  none');
  const sorted = [...cycles.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [, loop] of sorted) console.log(`  ${[...loop, loop[0]].join(' -> ')}`);
  return cycles.size;
}

/** The files from `start` to `goal` along imports, both included, by the fewest imports; null if none. */
function shortestPath(start, goal) {
  const cameFrom = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const current = queue.shift();
    if (current === goal) {
      const path = [];
      for (let step = goal; step !== null; step = cameFrom.get(step)) path.unshift(step);
      return path;
    }
    for (const dependency of graph.get(current) ?? []) {
      if (dependency.core || cameFrom.has(dependency.to)) continue;
      cameFrom.set(dependency.to, current);
      queue.push(dependency.to);
    }
  }
  return null;
}

/** A wing's engine knows no shell: its code names neither `process` nor `console` (comments aside). */
function printShellUses() {
  const uses = [];
  for (const path of projectModules.filter((candidate) => shellFree.test(candidate))) {
    code
      .get(path)
      .split('\n')
      .forEach((line, index) => {
        if (/\b(process|console)\s*(\.|\[)|globalThis\.(process|console)\b/.test(line)) {
          uses.push(`${path}:${index + 1}: ${line.trim()}`);
        }
      });
  }
  console.log('\n# The engines and the shell (process, console in a wing but its lambda/ and cli/ faces)\n');
  console.log(uses.length === 0 ? '  none' : uses.map((use) => `  ${use}`).join('\n'));
  return uses.length;
}

function printLargestFiles() {
  const sized = files.map((path) => ({ path, lines: lineCount(texts.get(path)) }));
  sized.sort((a, b) => b.lines - a.lines || a.path.localeCompare(b.path));
  const over = sized.filter((file) => file.lines > MAX_LINES);
  const shown = sized.slice(0, Math.max(top, over.length));
  console.log(`\n# Largest source files (${sized.length} files; over ${MAX_LINES} lines flagged)\n`);
  for (const file of shown) {
    console.log(
      `  ${String(file.lines).padStart(5)}  ${file.path}${file.lines > MAX_LINES ? `  OVER ${MAX_LINES}` : ''}`,
    );
  }
  return over.length;
}

/** The source files git knows of (committed or new, not ignored) that are still on disk. */
function sourceFiles() {
  let listed;
  try {
    listed = execFileSync(
      'git',
      ['ls-files', '--cached', '--others', '--exclude-standard', '-z', '--', ...SOURCE_FOLDERS],
      {
        cwd: root,
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      },
    );
  } catch (error) {
    console.error(
      `house: cannot list the source files with git (${error.message.split('\n')[0]}); run it from a git checkout`,
    );
    process.exit(2);
  }
  const paths = new Set(listed.split('\0').filter((path) => SOURCE_FILE.test(path) && !NOT_SOURCE.test(path)));
  return [...paths].filter((path) => existsSync(posix.join(root, path))).sort();
}

/** What a file imports: project files (resolved to their path) and node's own modules (by specifier). */
function importsOf(path) {
  const text = code.get(path);
  const specifiers = [];
  const patterns = [
    // import x from '...', import { a, type B } from '...', import * as x from '...', import type X from '...'
    /(?<![\w$.])import\s+(?:type\s+)?[\w$*{},\s]*?\bfrom\s*(['"])([^'"\n]+)\1/g,
    // import '...' (for its effects)
    /(?<![\w$.])import\s*(['"])([^'"\n]+)\1/g,
    // export * from '...', export { a } from '...', export type { A } from '...', export * as x from '...'
    /(?<![\w$.])export\s+(?:type\s+)?[\w$*{},\s]*?\bfrom\s*(['"])([^'"\n]+)\1/g,
    // import('...'), also in types (typeof import('...'))
    /(?<![\w$.])import\s*\(\s*(['"`])([^'"`\n]+)\1\s*[,)]/g,
  ];
  for (const pattern of patterns) for (const match of text.matchAll(pattern)) specifiers.push(match[2]);
  const found = new Map();
  for (const specifier of specifiers) {
    if (specifier.startsWith('.')) {
      const to = resolve(path, specifier);
      if (to) found.set(to, { to, core: false });
    } else if (isCore(specifier)) {
      found.set(specifier, { to: specifier, core: true });
    } // npm packages are not part of the house
  }
  return [...found.values()];
}

function isCore(specifier) {
  return (
    specifier.startsWith('node:') ||
    builtinModules.includes(specifier.split('/')[0]) ||
    builtinModules.includes(specifier)
  );
}

/** A relative specifier as TypeScript resolves it (`.js` names the `.ts` beside it, folders their index), to a source file. */
function resolve(from, specifier) {
  const base = posix.normalize(posix.join(posix.dirname(from), specifier));
  const swapped = { '.js': ['.ts', '.tsx'], '.mjs': ['.mts'], '.cjs': ['.cts'] };
  const extension = posix.extname(base);
  const candidates = [];
  if (swapped[extension]) candidates.push(...swapped[extension].map((ext) => base.slice(0, -extension.length) + ext));
  candidates.push(base);
  for (const ext of ['.ts', '.tsx', '.mts', '.cts', '.js', '.mjs', '.cjs']) candidates.push(base + ext);
  for (const ext of ['.ts', '.tsx', '.mts', '.js', '.mjs']) candidates.push(`${base}/index${ext}`);
  return candidates.find((candidate) => known.has(candidate)) ?? null;
}
