/**
 * Makes s3rver honour S3's conditional writes (since 2024): a PUT with `If-None-Match: *` is refused with 412
 * PreconditionFailed when the key exists, one with `If-Match: "etag"` when the key is missing or its ETag is
 * another. Stock s3rver ignores both headers and stores the object anyway, so a test of a compare-and-swap
 * on S3 would pass whether or not the guard works. The check and the write of one key run one at a time
 * (conditional PUTs of a key are queued here, as S3 serializes them), so two writers holding the same ETag
 * cannot both win. A GET or HEAD of a key waits for the conditional PUTs of that key queued before it (and they for
 * it): s3rver replaces an object's file and its ETag one after the other, so a GET between the two would see the
 * new bytes with the old ETag (or the other way round), which S3 never shows, and a compare-and-swap would then
 * be handed an ETag that does not match what it read.
 */
import { readFile } from 'node:fs/promises';

/** Conditional PUTs under way, by bucket/key: the tail of each key's queue. */
const queues = new Map();

function queued(id, action) {
  const previous = queues.get(id) ?? Promise.resolve();
  const run = previous.then(action, action);
  const tail = run.catch(() => undefined);
  queues.set(id, tail);
  tail.then(() => {
    if (queues.get(id) === tail) queues.delete(id);
  });
  return run;
}

async function currentEtag(store, bucket, key) {
  try {
    return JSON.stringify((await readFile(store.getResourcePath(bucket, key, 'object.md5'), 'utf8')).trim());
  } catch (error) {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  }
}

function refuse(ctx, condition) {
  ctx.status = 412;
  ctx.type = 'application/xml';
  ctx.body =
    '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>PreconditionFailed</Code>' +
    `<Message>At least one of the pre-conditions you specified did not hold</Message><Condition>${condition}</Condition></Error>`;
}

/** Puts the conditional-write check in front of every route of `server` (path-style requests). */
export function patchS3rverForConditionalPuts(server) {
  const middleware = async (ctx, next) => {
    const ifMatch = ctx.get('if-match');
    const ifNoneMatch = ctx.get('if-none-match');
    const slash = ctx.path.indexOf('/', 1);
    if (slash < 0 || slash === ctx.path.length - 1) return next();
    const bucket = decodeURIComponent(ctx.path.slice(1, slash));
    const key = decodeURIComponent(ctx.path.slice(slash + 1));
    // A read of a key takes its turn with the conditional PUTs of that key, so it sees one object whole, bytes and ETag.
    if (ctx.method === 'GET' || ctx.method === 'HEAD') return queued(`${bucket}/${key}`, () => next());
    if (
      ctx.method !== 'PUT' ||
      (ifMatch === '' && ifNoneMatch === '') ||
      'partNumber' in ctx.query ||
      'uploadId' in ctx.query
    )
      return next();
    return queued(`${bucket}/${key}`, async () => {
      const etag = await currentEtag(server.store, bucket, key);
      if (ifNoneMatch !== '' && (ifNoneMatch !== '*' || etag !== undefined)) return refuse(ctx, 'If-None-Match');
      if (ifMatch !== '' && (etag === undefined || ifMatch.replace(/^W\//, '') !== etag))
        return refuse(ctx, 'If-Match');
      return next();
    });
  };
  server.middleware.unshift(middleware);
}
