/**
 * Takes s3rver's request logging out. The tests start it with `silent: true`, yet its logger middleware still
 * formats two coloured lines per request (koa-logger, with chalk), hands each to a winston logger whose one transport
 * then drops it, and pipes every streamed answer through a byte counter to log its length. None of it is ever seen;
 * it was a sixth of s3rver's CPU (measured: 2,000 PUTs, 2,000 GETs, 300 HEADs of missing keys and a listing, 6.3
 * CPU-s with it, 5.2 without). Here the middleware is a pass-through and `app.logger` / `ctx.logger` (which s3rver
 * and its controllers call) a logger that does nothing. No request or answer changes.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

const ignore = () => {};
const silentLogger = Object.freeze({
  error: ignore,
  warn: ignore,
  info: ignore,
  debug: ignore,
  close: ignore,
  exceptions: Object.freeze({ unhandle: ignore }),
});

/** Replaces s3rver's logger middleware for every server of this process: call it before s3rver is loaded. */
export function patchS3rverQuiet() {
  const path = require.resolve('s3rver/lib/middleware/logger.js');
  if (require.cache[path]) throw new Error('patchS3rverQuiet must run before s3rver is loaded');
  const quietLogger = (app) => {
    app.logger = app.context.logger = silentLogger;
    return (_ctx, next) => next();
  };
  require.cache[path] = { id: path, filename: path, loaded: true, exports: quietLogger, children: [], paths: [] };
}
