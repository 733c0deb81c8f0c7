/**
 * What a Markdown page links from and to, as GitHub renders it: the lines outside fenced code (inline code blanked,
 * since a link or heading there is text) and the anchors of its headings (GitHub's slugs: lower case, punctuation
 * dropped, spaces to hyphens, -1, -2 … for repeats). Shared by `scripts/doc-links.mjs` and the README's test.
 */

/**
 * Each line of `text` outside fenced code blocks, with inline code blanked; fenced lines are empty.
 * @param {string} text
 * @returns {string[]}
 */
export function proseLines(text) {
  let fenced = false;
  return text.split('\n').map((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line.replace(/`[^`]*`/g, (code) => ' '.repeat(code.length));
  });
}

/**
 * The anchors GitHub makes from the headings of `text` (headings inside fenced code are not headings).
 * @param {string} text
 * @returns {Set<string>}
 */
export function headingAnchors(text) {
  const seen = new Map();
  const slugs = new Set();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const heading = !fenced && /^#{1,6}\s+(.*)$/.exec(line);
    if (!heading) continue;
    const base = heading[1]
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    slugs.add(count === 0 ? base : `${base}-${count}`);
  }
  return slugs;
}
