export interface ByteRange {
  offset: number;
  length: number;
}

/**
 * One `bytes=` range (RFC 9110 §14.1.2). Multiple ranges and unparsable headers are ignored
 * (the whole file is served, as the RFC allows); a range starting past the end cannot be met.
 */
export function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | null {
  const match = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!match || (match[1] === '' && match[2] === '')) return null;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) return 'unsatisfiable';
    const length = Math.min(suffix, size);
    return { offset: size - length, length };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (start >= size) return 'unsatisfiable';
  if (end < start) return null;
  return { offset: start, length: end - start + 1 };
}
