/**
 * Run before each infra test file (vitest.config.ts, setupFiles): the files share their worker's modules, so what
 * belongs to one file is undone after it here.
 */
import { afterAll } from 'vitest';
import { removeSynthFolder } from './synth-kit.js';

afterAll(() => removeSynthFolder());
