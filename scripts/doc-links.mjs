#!/usr/bin/env node
/**
 * `node scripts/doc-links.mjs`: every relative link and #anchor in README.md, docs/ and the other READMEs
 * resolves, offline. Anchors are GitHub's heading slugs (lower case, punctuation dropped, spaces to
 * hyphens, -1, -2 … for repeats). Prints each broken link with its file and line; exits 1 if there is one.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { headingAnchors, proseLines } from './markdown-anchors.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const pages = [
  'README.md',
  'bench/README.md',
  'chaos/README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

const slugCache = new Map();
function anchorsOf(path) {
  if (!slugCache.has(path)) slugCache.set(path, headingAnchors(readFileSync(path, 'utf8')));
  return slugCache.get(path);
}

const broken = [];
let checked = 0;
for (const page of pages) {
  const file = join(root, page);
  if (!existsSync(file)) continue;
  proseLines(readFileSync(file, 'utf8')).forEach((line, index) => {
    for (const [, target] of line.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target)) continue; // https:, mailto: — not checked offline
      checked += 1;
      const [path, anchor] = target.split('#');
      const resolved = path === '' ? file : join(dirname(file), decodeURIComponent(path));
      const where = `${page}:${index + 1}: ${target}`;
      if (!existsSync(resolved)) broken.push(`${where}: no such file ${relative(root, resolved)}`);
      else if (anchor !== undefined && !statSync(resolved).isDirectory() && !anchorsOf(resolved).has(anchor)) {
        broken.push(`${where}: no heading #${anchor} in ${relative(root, resolved)}`);
      }
    }
  });
}
console.log(broken.length === 0 ? `doc links: ${checked} relative links checked, all resolve` : broken.join('\n'));
process.exit(broken.length === 0 ? 0 : 1);
