import type { Context } from 'hono';
import type { ResultRow } from '../db/results';
import type { AppEnv } from '../env';
import { ClientClosedRequest } from '../errors';
import { deleteResult, newResultId, saveResult } from '../storage/results';

type SaveInput = Omit<Parameters<typeof saveResult>[1], 'uuid'>;

/**
 * Stores a result for a client that is still waiting for its link, and takes it back if the
 * client disconnects before the answer leaves: a call given up mid-way keeps nothing (the daily
 * quota gives its conversion back the same way). On a deployment a disconnect also cancels the
 * request's own promises, so the clean-up runs from the abort event, under waitUntil, by the
 * result's id chosen here in advance. Throws ClientClosedRequest when the client has gone.
 */
export async function saveForWaitingClient(c: Context<AppEnv>, input: SaveInput): Promise<{ row: ResultRow; delivered: () => void }> {
  const signal = c.get('clientSignal');
  if (signal.aborted) throw new ClientClosedRequest();
  const uuid = newResultId();
  const discard = () => c.executionCtx.waitUntil(deleteResult(c.env, uuid));
  signal.addEventListener('abort', discard, { once: true });
  try {
    const row = await saveResult(c.env, { ...input, uuid });
    if (signal.aborted) {
      // The abort may have come while the file was being written, before there was anything to delete.
      c.executionCtx.waitUntil(deleteResult(c.env, uuid));
      throw new ClientClosedRequest();
    }
    return { row, delivered: () => signal.removeEventListener('abort', discard) };
  } catch (error) {
    signal.removeEventListener('abort', discard);
    throw error;
  }
}

