/** What the Lambda metrics tests share: the EMF records (Powertools Metrics) a handler writes to stdout. */
import { vi } from 'vitest';

/** One EMF record: its metric values and dimensions at the top level, the directive under `_aws`. */
export type Emf = Record<string, unknown> & {
  _aws: {
    CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[];
  };
};

/** Runs `action`, returning what it resolved to or threw, and the EMF records it wrote to stdout. */
export async function captureEmf<T>(action: () => Promise<T>): Promise<{ result?: T; error?: unknown; emf: Emf[] }> {
  const chunks: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  });
  try {
    const result = await action();
    return { result, emf: emfOf(chunks) };
  } catch (error) {
    return { error, emf: emfOf(chunks) };
  } finally {
    spy.mockRestore();
  }
}

function emfOf(chunks: readonly string[]): Emf[] {
  return chunks
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((record): record is Emf => record._aws !== undefined);
}
