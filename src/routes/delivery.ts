import type { Context } from 'hono';
import type { AppEnv } from '../env';
import { ClientClosedRequest } from '../errors';
import type { ProcessedResult } from '../image/operations';
import type { ResultTarget } from '../image/result-sink';
import { deleteResult, newResultId, resultTarget, storeResult, type ResultInput, type StoredResult } from '../storage/results';

/**
 * Runs a conversion straight into storage for a client that is still waiting for its link, and
 * takes it back if the client disconnects before the answer leaves: a call given up mid-way keeps
 * nothing (the daily quota gives its conversion back the same way). A disconnect is noticed by
 * the run at its next band (the upload's drain), which then aborts its upload. On a deployment a
 * disconnect also cancels the request's own promises, so the clean-up also runs from the abort
 * event, under waitUntil, by the result's id chosen here in advance: the multipart upload is
 * aborted and any stored file deleted. Throws ClientClosedRequest when the client has gone.
 */
export async function saveForWaitingClient(
  c: Context<AppEnv>,
  input: ResultInput,
  run: (target: ResultTarget) => Promise<ProcessedResult>,
  hold?: (bytes: number) => () => void,
): Promise<StoredResult & { delivered: () => void }> {
  const signal = c.get('clientSignal');
  if (signal.aborted) throw new ClientClosedRequest();
  const uuid = newResultId();
  const target = resultTarget(c.env, uuid, input, signal);
  const discard = () => c.executionCtx.waitUntil(Promise.all([target.upload()?.abort(), deleteResult(c.env, uuid)]));
  signal.addEventListener('abort', discard, { once: true });
  try {
    const saved = await storeResult(c.env, { ...input, uuid }, target, run, hold);
    if (signal.aborted) {
      // The abort may have come while the file was being completed, before there was anything to delete.
      c.executionCtx.waitUntil(deleteResult(c.env, uuid));
      throw new ClientClosedRequest();
    }
    return { ...saved, delivered: () => signal.removeEventListener('abort', discard) };
  } catch (error) {
    signal.removeEventListener('abort', discard);
    throw error;
  }
}
