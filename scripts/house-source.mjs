/**
 * How the house checker reads a source file (scripts/house.mjs): its code with the comments blanked out, so that an
 * import or `process` named in a comment is not taken for code, and its length in lines.
 */

/**
 * The text with comments blanked (line breaks kept, so line numbers still match) and strings, template
 * literals and regex literals left as they are, so `//` or `/*` inside them is not taken for a comment.
 */
export function withoutComments(text) {
  let out = '';
  let i = 0;
  /** Brace depths at which a `${` of a template literal was opened. */
  const templates = [];
  let depth = 0;
  /** The last character of code that is not white space: tells a regex literal from a division. */
  let last = '';
  const blank = (from, to) => text.slice(from, to).replace(/[^\n]/g, ' ');
  const skipString = (quote, start) => {
    let j = start + 1;
    while (j < text.length && text[j] !== quote && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1;
    return Math.min(j + 1, text.length);
  };
  /** From inside a template literal to its end or to a `${`; returns the index after it. */
  const skipTemplate = (start) => {
    let j = start;
    while (j < text.length) {
      if (text[j] === '\\') j += 2;
      else if (text[j] === '`') return { end: j + 1, opened: false };
      else if (text[j] === '$' && text[j + 1] === '{') return { end: j + 2, opened: true };
      else j += 1;
    }
    return { end: text.length, opened: false };
  };
  const regexMayStart = () =>
    last === '' ||
    /[(,=:[!&|?{};+\-*%<>~^]/.test(last) ||
    /\b(return|typeof|case|do|else|in|of|void|yield|await)$/.test(out.trimEnd());
  while (i < text.length) {
    const c = text[i];
    const next = text[i + 1];
    if (c === '/' && next === '/') {
      const end = text.indexOf('\n', i);
      const stop = end === -1 ? text.length : end;
      out += blank(i, stop);
      i = stop;
    } else if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end === -1 ? text.length : end + 2;
      out += blank(i, stop);
      i = stop;
    } else if (c === "'" || c === '"') {
      const stop = skipString(c, i);
      out += text.slice(i, stop);
      i = stop;
      last = c;
    } else if (c === '`' || (c === '}' && templates.length > 0 && templates.at(-1) === depth)) {
      if (c === '}') templates.pop();
      const { end, opened } = skipTemplate(i + 1);
      if (opened) templates.push(depth);
      out += text.slice(i, end);
      i = end;
      last = opened ? '{' : '`';
    } else if (c === '/' && regexMayStart()) {
      let j = i + 1;
      let inClass = false;
      while (j < text.length && text[j] !== '\n') {
        if (text[j] === '\\') j += 2;
        else {
          if (text[j] === '[') inClass = true;
          else if (text[j] === ']') inClass = false;
          else if (text[j] === '/' && !inClass) break;
          j += 1;
        }
      }
      if (text[j] !== '/') {
        out += c; // not a regex after all
        i += 1;
        last = c;
        continue;
      }
      j += 1;
      while (j < text.length && /[a-z]/i.test(text[j])) j += 1;
      out += text.slice(i, j);
      i = j;
      last = '/';
    } else {
      if (c === '{') depth += 1;
      else if (c === '}') depth -= 1;
      out += c;
      if (!/\s/.test(c)) last = c;
      i += 1;
    }
  }
  return out;
}

export function lineCount(text) {
  if (text.length === 0) return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}
