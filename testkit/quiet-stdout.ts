/**
 * A setup file of the test projects (vitest.config.ts). Powertools' Logger and Metrics write through a Console of
 * their own on `process.stdout` and `process.stderr`, as Lambda wants, which vitest does not intercept: a passing
 * run printed some 175 lines of JSON logs and EMF records of Lambda faces invoked in the tests. Here what is written
 * to the worker's stdout or stderr goes through the global console instead, which vitest shows with a failing test
 * only (`silent: 'passed-only'`). A test that spies on `process.stdout.write` still sees every write: its spy
 * replaces this one.
 */
const installed = Symbol.for('catalog-sync.quiet-stdout');
const state = globalThis as { [installed]?: true };

if (!state[installed]) {
  state[installed] = true;
  for (const [stream, print] of [
    [process.stdout, (text: string) => console.log(text)],
    [process.stderr, (text: string) => console.error(text)],
  ] as const) {
    stream.write = ((chunk: string | Uint8Array, encoding?: unknown, callback?: unknown): boolean => {
      const text =
        typeof chunk === 'string'
          ? chunk
          : Buffer.from(chunk).toString(typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
      print(text.endsWith('\n') ? text.slice(0, -1) : text);
      const done = typeof encoding === 'function' ? encoding : callback;
      if (typeof done === 'function') process.nextTick(done as () => void);
      return true;
    }) as typeof stream.write;
  }
}
