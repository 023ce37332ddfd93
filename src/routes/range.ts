/**
 * What to do with a Range header (RFC 9110 §14.1.2) before asking R2, which computes the bytes
 * itself: null when there is no range to honour (none, several, unparsable or reversed: the
 * whole file is served, as the RFC allows), 'unsatisfiable' when it starts past the end (a
 * 416, which R2 would not tell apart from a whole-file answer), else the header for R2.
 */
export function rangeRequest(header: string | undefined, size: number): Headers | 'unsatisfiable' | null {
  const match = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!match || (match[1] === '' && match[2] === '')) return null;
  if (match[1] === '') return Number(match[2]) === 0 ? 'unsatisfiable' : new Headers({ Range: header!.trim() });
  if (Number(match[1]) >= size) return 'unsatisfiable';
  if (match[2] !== '' && Number(match[2]) < Number(match[1])) return null;
  return new Headers({ Range: header!.trim() });
}

/** The bytes R2 sent for a ranged get, as offset and length (R2 may describe a suffix range by its length alone). */
export function servedRange(range: R2Range | undefined, size: number): { offset: number; length: number } | null {
  if (!range) return null;
  if ('suffix' in range && range.suffix !== undefined) {
    const length = Math.min(range.suffix, size);
    return { offset: size - length, length };
  }
  const offset = 'offset' in range && range.offset !== undefined ? range.offset : 0;
  const length = 'length' in range && range.length !== undefined ? range.length : size - offset;
  return { offset, length };
}
