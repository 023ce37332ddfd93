import { concat } from '../../bytes';

/** Largest inflated profile accepted; real profiles are well under 1 MB. */
export const MAX_INFLATED_PROFILE = 4 * 1024 * 1024;

/** A PNG iCCP profile's zlib stream inflated, or null when it is corrupt or inflates to more than MAX_INFLATED_PROFILE. */
export async function inflateProfile(data: Uint8Array): Promise<Uint8Array | null> {
  const reader = new Blob([data.slice()]).stream().pipeThrough(new DecompressionStream('deflate')).getReader();
  const parts: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return concat(parts);
      total += value.length;
      if (total > MAX_INFLATED_PROFILE) {
        await reader.cancel().catch(() => {});
        return null;
      }
      parts.push(value);
    }
  } catch {
    return null;
  }
}
