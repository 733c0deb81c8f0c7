#!/usr/bin/env node
/**
 * `npm run house`: checks the code against the intended house (docs/development.md, "The house").
 *
 * Prints the floors and the import edges between them, every rule violation of .dependency-cruiser.cjs,
 * every cycle between files, uses of `process`/`console` in the engine, and the largest source files.
 * It reports and exits 0; with `--strict` it exits 1 when an error-level rule is broken, a cycle exists,
 * the engine touches the shell, or a source file is over the line limit (warnings never fail), so it
 * can become a test once the restructure is done.
 */
import { createRequire } from 'node:module';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { cruise, getAvailableTranspilers } from 'dependency-cruiser';

const root = fileURLToPath(new URL('..', import.meta.url));
const SOURCE_FOLDERS = ['lambda', 'infra', 'test', 'bench', 'chaos', 'scripts', 'bin'];
const SOURCE_FILE = /\.(ts|mts|cts|js|mjs|cjs)$/;
/** Generated or recorded data, not source: never counted. */
const NOT_SOURCE = /(^|\/)(node_modules|dist|cdk\.out|fixtures|results)(\/|$)/;
const MAX_LINES = 400;

const { values: flags } = parseArgs({
  options: {
    strict: { type: 'boolean', default: false },
    top: { type: 'string', default: '15' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (flags.help) {
  console.log(`usage: npm run house [-- --strict] [-- --top N]
  --strict   exit 1 on any error-level violation, cycle, shell use in the engine, or file over ${MAX_LINES} lines
  --top N    how many of the largest source files to list (default 15; every file over ${MAX_LINES} is listed)`);
  process.exit(0);
}
const top = Number(flags.top);
if (!Number.isInteger(top) || top < 0) {
  console.error(`--top: "${flags.top}" must be a whole number of files, 0 or more`);
  process.exit(2);
}

const config = createRequire(import.meta.url)(join(root, '.dependency-cruiser.cjs'));
const floors = config.floors.map((floor) => ({ ...floor, pattern: new RegExp(floor.path) }));
const floorOf = (path) => floors.find((floor) => floor.pattern.test(path));

// Without swc, dependency-cruiser skips every .ts file and would report an empty, rule-abiding house.
const swc = getAvailableTranspilers().find((transpiler) => transpiler.name === 'swc');
if (!swc?.available) {
  console.error('house: @swc/core is not installed for this platform (dependency-cruiser reads .ts files with it); run `npm install` here');
  process.exit(2);
}

process.chdir(root);
const cruised = await cruise(
  SOURCE_FOLDERS.filter((folder) => folder !== 'bin'), // bin/ only loads dist/: nothing to resolve
  { ...config.options, validate: true, ruleSet: { forbidden: config.forbidden } },
);
const { modules, summary } = cruised.output;
if (modules.length === 0) {
  console.error(`house: no module found under ${SOURCE_FOLDERS.join(', ')} (run it from a checkout of catalog-sync)`);
  process.exit(2);
}

/** Project files only: node's own modules and npm packages are not part of the house. */
const projectModules = modules.filter((module) => !module.coreModule && !/node_modules/.test(module.source));

printFloors();
printEdges();
const errors = printViolations();
const cycles = printCycles();
const shellUses = printShellUses();
const oversized = printLargestFiles();

const warnings = summary.violations.filter((violation) => violation.rule.severity === 'warn').length;
const summaryLine = `house: ${errors} imports break error-level rules, ${warnings} warnings, ${cycles} cycles, ` +
  `${shellUses} uses of the shell in the engine, ${oversized} files over ${MAX_LINES} lines`;
console.log(`\n${summaryLine}`);
const broken = errors + cycles + shellUses + oversized > 0;
if (flags.strict && broken) process.exit(1);

function printFloors() {
  console.log('# Floors (top down; a file may import its own floor and lower ones)\n');
  for (const floor of floors) {
    const files = projectModules.filter((module) => floorOf(module.source) === floor).length;
    console.log(`  ${floor.rank}  ${floor.name.padEnd(9)} ${String(files).padStart(4)} files  ${floor.what}`);
  }
  const unplaced = projectModules.map((module) => module.source).filter((source) => !floorOf(source));
  if (unplaced.length > 0) console.log(`\n  not on any floor yet: ${unplaced.join(', ')}`);
}

function printEdges() {
  const edges = new Map();
  for (const module of projectModules) {
    const from = floorOf(module.source);
    if (!from) continue;
    for (const dependency of module.dependencies) {
      const to = floorOf(dependency.resolved);
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

/** Each broken import once, with every rule it breaks; the rules first, with what they mean. */
function printViolations() {
  const rules = new Map();
  const imports = new Map();
  for (const violation of summary.violations) {
    if (violation.cycle) continue; // listed once per loop below
    const { name, severity } = violation.rule;
    rules.set(name, { severity, count: (rules.get(name)?.count ?? 0) + 1 });
    const key = `${violation.from} -> ${violation.to}`;
    const broken = imports.get(key) ?? { key, severity, rules: [] };
    if (severity === 'error') broken.severity = 'error';
    broken.rules.push(name);
    imports.set(key, broken);
  }
  console.log('\n# Rules broken\n');
  if (rules.size === 0) console.log('  none');
  for (const [name, { severity, count }] of rules) {
    const rule = config.forbidden.find((candidate) => candidate.name === name);
    console.log(`  ${name} (${severity}, ${count}): ${rule?.comment ?? ''}`);
  }
  console.log('\n# Imports that break them (errors first)\n');
  if (imports.size === 0) console.log('  none');
  const sorted = [...imports.values()].sort((a, b) => (a.severity === b.severity ? 0 : a.severity === 'error' ? -1 : 1));
  for (const broken of sorted) console.log(`  ${broken.severity.padEnd(5)}  ${broken.key}  [${broken.rules.join(', ')}]`);
  return sorted.filter((broken) => broken.severity === 'error').length;
}

function printCycles() {
  const cycles = new Map();
  for (const violation of summary.violations) {
    if (!violation.cycle) continue;
    const files = [violation.from, ...violation.cycle.map((step) => step.name)];
    files.pop(); // the cycle ends where it began
    // The same loop is reported from each of its files: start it at its smallest name to count it once.
    const start = files.indexOf([...files].sort()[0]);
    const loop = [...files.slice(start), ...files.slice(0, start)];
    cycles.set(loop.join(' -> '), loop);
  }
  console.log('\n# Cycles between files\n');
  if (cycles.size === 0) console.log('  none');
  for (const loop of cycles.values()) console.log(`  ${[...loop, loop[0]].join(' -> ')}`);
  return cycles.size;
}

/** The engine knows no shell: its code names neither `process` nor `console` (comments aside). */
function printShellUses() {
  const engine = floors.find((floor) => floor.name === 'engine');
  const uses = [];
  for (const module of projectModules.filter((candidate) => floorOf(candidate.source) === engine)) {
    const lines = withoutComments(readFileSync(join(root, module.source), 'utf8')).split('\n');
    lines.forEach((line, index) => {
      if (/\b(process|console)\s*(\.|\[)|globalThis\.(process|console)\b/.test(line)) {
        uses.push(`${module.source}:${index + 1}: ${line.trim()}`);
      }
    });
  }
  console.log('\n# The engine and the shell (process, console in lambda/sync/)\n');
  console.log(uses.length === 0 ? '  none' : uses.map((use) => `  ${use}`).join('\n'));
  return uses.length;
}

/** Block and line comments blanked, line breaks kept so line numbers still match. */
function withoutComments(text) {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, ' '))
    .replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

function printLargestFiles() {
  const sized = sourceFiles().map((path) => ({ path, lines: lineCount(readFileSync(join(root, path), 'utf8')) }));
  sized.sort((a, b) => b.lines - a.lines || a.path.localeCompare(b.path));
  const over = sized.filter((file) => file.lines > MAX_LINES);
  const shown = sized.slice(0, Math.max(top, over.length));
  console.log(`\n# Largest source files (${sized.length} files; over ${MAX_LINES} lines flagged)\n`);
  for (const file of shown) {
    console.log(`  ${String(file.lines).padStart(5)}  ${file.path}${file.lines > MAX_LINES ? `  OVER ${MAX_LINES}` : ''}`);
  }
  return over.length;
}

function sourceFiles() {
  const found = [];
  const walk = (folder) => {
    for (const entry of readdirSync(join(root, folder), { withFileTypes: true })) {
      const path = `${folder}/${entry.name}`;
      if (NOT_SOURCE.test(path)) continue;
      if (entry.isDirectory()) walk(path);
      else if (SOURCE_FILE.test(entry.name)) found.push(path);
    }
  };
  SOURCE_FOLDERS.forEach(walk);
  return found;
}

function lineCount(text) {
  if (text.length === 0) return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}
