import type { Context, Next } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../../env';
import { AppError, invalidParameter } from '../../errors';
import { toHex } from '../../hex';
import { formContentType } from '../form-content-type';
import { uploadAdmission } from '../upload-admission';
import { parseUploadForm } from '../upload-form';
import { uploadLimit } from '../upload-limit';
import { dailyLimitReached, IDEMPOTENCY_HEADER } from '../user-gate';

export { IDEMPOTENCY_HEADER };
export const REPLAYED_HEADER = 'Idempotent-Replayed';

// Visible ASCII, as the IETF draft's sf-string allows.
const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;

async function sha256OfStream(stream: ReadableStream<Uint8Array>): Promise<string> {
  const digest = new crypto.DigestStream('SHA-256');
  await stream.pipeTo(digest);
  return toHex(new Uint8Array(await digest.digest));
}

/**
 * What makes two calls "the same request": the operation, every text field and the file's name
 * and bytes. Not the raw body: a retrying client may choose another multipart boundary. The form
 * is the platform's parse of the body stream, the one the validator then reads (upload-form), and
 * the file is hashed as a stream (DigestStream), so the upload is held once, as without a key.
 */
async function fingerprint(c: Context<AppEnv>): Promise<string> {
  if (!/^multipart\/form-data/i.test(c.req.header('Content-Type') ?? '')) {
    throw new AppError('INVALID_PARAMETERS', 'The request body must be multipart/form-data with a "file" field.');
  }
  const form = await parseUploadForm(c);
  const parts: string[][] = [];
  for (const [name, value] of form) {
    parts.push(typeof value === 'string' ? [name, 'text', value] : [name, 'file', value.name, String(value.size), await sha256OfStream(value.stream())]);
  }
  parts.sort((a, b) => (a.join('\0') < b.join('\0') ? -1 : 1));
  const canonical = JSON.stringify({ operation: c.req.path.split('/').pop(), parts });
  return toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(canonical))));
}

const reused = () =>
  new AppError(
    'IDEMPOTENCY_KEY_REUSED',
    'This Idempotency-Key was already used for a different request (another operation, file or parameters). Use a new key for a new request.',
  );

/**
 * The claim is the user's Durable Object's (near): it keeps the key's record beside the day's
 * count, and claiming reserves the conversion in the same call. A replay gives back an answer the
 * key was already given, and waits for no far store (decisions.md, "What each cache may show late").
 */
async function runUnderClaim(c: Context<AppEnv>, next: Next, key: string): Promise<void> {
  const print = await fingerprint(c);
  const claim = await c.get('ticket')!.claim(key, print);
  switch (claim.kind) {
    case 'claimed':
      return next();
    case 'reused':
      throw reused();
    case 'running':
      throw new AppError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still being processed. Retry in a moment to get its result.', undefined, {
        'Retry-After': '1',
      });
    case 'quota':
      throw dailyLimitReached(c);
    case 'replay':
      c.get('facts').idempotentReplay = true;
      c.res = c.body(claim.response, 200, { 'Content-Type': 'application/json', [REPLAYED_HEADER]: 'true' });
  }
}

/**
 * `Idempotency-Key` on processing calls (Stripe's scheme, the IETF draft's status codes): the
 * first call with a key runs and its answer is kept for as long as its result; a repeat of the
 * same request gets that answer again (same uuid, no second conversion, no quota), marked
 * `Idempotent-Replayed: true`. The same key with another request is refused (422), and so is a
 * repeat while the first is still running (409, Retry-After: 1). Failed calls keep nothing, so a
 * retry after an error runs afresh. A keyed call reads its upload before its conversion is
 * reserved (it may be a replay), so its size is checked here first.
 */
export const idempotency = createMiddleware<AppEnv>(async (c, next) => {
  const key = c.req.header(IDEMPOTENCY_HEADER);
  if (key === undefined) return next();
  if (!KEY_SHAPE.test(key)) throw invalidParameter(IDEMPOTENCY_HEADER, 'must be 1 to 255 visible ASCII characters, such as a UUID');
  await uploadLimit(c, async () => {
    await formContentType(c, async () => {
      await uploadAdmission(c, () => runUnderClaim(c, next, key));
    });
  });
});
