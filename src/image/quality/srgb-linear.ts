import { srgbDecode } from '../stages/colour/srgb';

/** srgbDecode of each 8-bit value: linear light 0..1. */
export const linearFromSrgb8: Float32Array = Float32Array.from({ length: 256 }, (_, v) => srgbDecode(v / 255));
