import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_HTTP_OPTIONS } from '../../lambda/catalog/http-options.js';
import { VERSION } from '../../lambda/contract/version.js';

describe('VERSION', () => {
  it('is the version in package.json, and the catalog is told it in the User-Agent', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(VERSION).toBe(pkg.version);
    expect(DEFAULT_HTTP_OPTIONS.userAgent).toMatch(new RegExp(`^catalog-sync/${VERSION.replaceAll('.', '\\.')} `));
  });
});
