/** The file with its EXIF Orientation (a SHORT in either byte order) set to `value`. */
export function withOrientation(jpeg: Uint8Array, value: number): Uint8Array {
  const copy = new Uint8Array(jpeg);
  for (let i = 0; i + 10 < copy.length && i < 65_536; i++) {
    if (copy[i] === 0x01 && copy[i + 1] === 0x12 && copy[i + 2] === 0 && copy[i + 3] === 3) {
      copy[i + 9] = value; // big-endian: tag, type 3, count 1, value in the first two bytes
      return copy;
    }
    if (copy[i] === 0x12 && copy[i + 1] === 0x01 && copy[i + 2] === 3 && copy[i + 3] === 0) {
      copy[i + 8] = value;
      return copy;
    }
  }
  throw new Error('no Orientation tag');
}
