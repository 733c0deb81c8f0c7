/**
 * A setup file of every test project (vitest.config.ts), run before each test file: the CDK apps a file synthesized
 * (testkit/synth-folder.ts) are removed after its last test.
 */
import { afterAll } from 'vitest';
import { removeSynthFolder } from './synth-folder.js';

afterAll(() => removeSynthFolder());
