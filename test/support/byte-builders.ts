/** Big-endian byte builders for the containers tests make by hand (ISOBMFF boxes, ICC tags). */
export const u16 = (v: number) => [(v >> 8) & 0xff, v & 0xff];
export const u32 = (v: number) => [(v >>> 24) & 0xff, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff];
export const u64 = (v: number) => [...u32(Math.floor(v / 2 ** 32)), ...u32(v >>> 0)];
export const text = (s: string) => [...s].map((c) => c.charCodeAt(0));

/** An ISOBMFF box: 32-bit size, type, then the content. */
export const box = (type: string, ...content: ArrayLike<number>[]) => {
  const body = content.flatMap((c) => Array.from(c));
  return [...u32(8 + body.length), ...text(type), ...body];
};

/** An ISOBMFF full box: a box whose content starts with version and 24-bit flags. */
export const fullBox = (type: string, version: number, flags: number, ...content: ArrayLike<number>[]) =>
  box(type, [version, (flags >> 16) & 0xff, (flags >> 8) & 0xff, flags & 0xff], ...content);
