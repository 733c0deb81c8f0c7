import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { WASM_TIERING_BUDGET } from '../../lambda/runtime/wasm-tiering.js';

const bin = readFileSync(fileURLToPath(new URL('../../bin/catalog-sync.js', import.meta.url)), 'utf8');

describe('the WebAssembly tiering budget', () => {
  it('the CLI sets the same budget as the Lambda handlers, before its bundle is compiled', () => {
    const set = /setFlagsFromString\('--wasm-tiering-budget=(\d+)'\)/.exec(bin);
    expect(Number(set?.[1])).toBe(WASM_TIERING_BUDGET);
    // Before the bundle is loaded: a code cache made under other V8 flags is refused.
    expect(bin.indexOf('setFlagsFromString')).toBeLessThan(bin.indexOf('const cli = loadWithCodeCache('));
  });

  it("is raised well above V8's default (1,800,000), so a short process never tiers undici's parser up", () => {
    expect(WASM_TIERING_BUDGET).toBeGreaterThanOrEqual(50 * 1_800_000);
  });
});
