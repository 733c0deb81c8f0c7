/**
 * The integration files that load a Lambda face run with a module graph of their own (vitest.config.ts): the list
 * must name every such file and nothing else, or a face loaded once for several files would keep the first file's
 * environment (its Powertools service name, its warm clients).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importsLambdaFace, LAMBDA_FACE_FILES } from '../../testkit/lambda-face-files.js';

const folder = join(import.meta.dirname, '..', 'integration');

describe('the integration files that load a Lambda face', () => {
  it('are exactly the files listed', () => {
    const loading = readdirSync(folder, { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.test.ts'))
      .filter((name) => importsLambdaFace(readFileSync(join(folder, name), 'utf8')))
      .map((name) => `test/integration/${name.split(sep).join('/')}`)
      .sort();
    expect(loading).toEqual([...LAMBDA_FACE_FILES].sort());
  });

  it('are recognised by a static import, a dynamic import and a face helper, and not by a mention in text', () => {
    expect(importsLambdaFace("import { handler } from '../../lambda/sync/lambda.js';")).toBe(true);
    expect(importsLambdaFace("const { handler } = await import('../../lambda/backfill/lambda/worker.js');")).toBe(true);
    expect(importsLambdaFace("import { SourceSecretReader } from '../../lambda/runtime/source-secret.js';")).toBe(true);
    expect(importsLambdaFace("import { batchConsumerHandler } from '../../lambda/consumer/lambda.js';")).toBe(true);
    expect(importsLambdaFace("const files = ['dist/lambda/sync/lambda.js'];")).toBe(false);
    expect(importsLambdaFace("import { runSlice } from '../../lambda/sync/index.js';")).toBe(false);
    expect(importsLambdaFace("import { lambdaSettings } from '../../lambda/runtime/lambda-settings.js';")).toBe(false);
    expect(importsLambdaFace("import { planBackfill } from '../../../lambda/backfill/index.js';")).toBe(false);
  });
});
