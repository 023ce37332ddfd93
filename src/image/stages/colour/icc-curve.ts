import { damaged, u16be, u32be } from '../../bytes';
import { s15Fixed16, tagType } from './icc';

/** A one-dimensional transfer function on 0..1 (input clipped to 0..1). */
export type Curve = (x: number) => number;

/** Table curves longer than this are refused: real profiles use at most 4096 entries. */
const MAX_CURVE_ENTRIES = 65536;
/** parametricCurveType parameter counts for function types 0..4. */
const PARAMETER_COUNTS = [1, 3, 4, 5, 7];

export const identity: Curve = (x) => clip(x);

export function clip(x: number): number {
  return x > 0 ? (x < 1 ? x : 1) : 0; // also maps NaN to 0
}

/**
 * A `curv` or `para` element at `offset` of `tag` (a TRC tag or one curve of an lutAtoBType), with
 * its size in bytes including the padding to a 4-byte boundary. Throws `damaged` for anything else.
 */
export function readCurve(tag: Uint8Array, offset = 0): { curve: Curve; size: number } {
  const type = tagType(tag.subarray(offset));
  if (type === 'curv') {
    const count = u32be(tag, offset + 8);
    if (count > MAX_CURVE_ENTRIES) throw damaged(`icc: curv with ${count} entries`);
    const size = align4(12 + 2 * count);
    if (count === 0) return { curve: identity, size };
    if (count === 1) {
      const gamma = u16be(tag, offset + 12) / 256; // u8Fixed8Number
      return { curve: (x) => clip(x) ** gamma, size };
    }
    const table = new Float64Array(count);
    for (let i = 0; i < count; i++) table[i] = u16be(tag, offset + 12 + 2 * i) / 65535;
    return { curve: tableCurve(table), size };
  }
  if (type === 'para') {
    const functionType = u16be(tag, offset + 8);
    const count = PARAMETER_COUNTS[functionType];
    if (count === undefined) throw damaged(`icc: para function type ${functionType}`);
    const parameters = Array.from({ length: count }, (_, i) => s15Fixed16(tag, offset + 12 + 4 * i));
    return { curve: parametricCurve(functionType, parameters), size: align4(12 + 4 * count) };
  }
  throw damaged(`icc: curve type ${JSON.stringify(type)}`);
}

/** Piecewise-linear interpolation through equally spaced samples of 0..1 (at least 2). */
export function tableCurve(table: ArrayLike<number>): Curve {
  const last = table.length - 1;
  return (x) => {
    const position = clip(x) * last;
    const index = Math.min(Math.floor(position), last - 1);
    const fraction = position - index;
    return table[index] + (table[index + 1] - table[index]) * fraction;
  };
}

/** ICC.1:2010 table 68: the five parametric function types, output clipped to 0..1. */
export function parametricCurve(functionType: number, p: readonly number[]): Curve {
  const [g, a = 1, b = 0, c = 0, d = 0, e = 0, f = 0] = p;
  const power = (base: number) => (base > 0 ? base ** g : 0);
  switch (functionType) {
    case 0:
      return (x) => clip(power(clip(x)));
    case 1:
      return (x) => clip(clip(x) >= -b / a ? power(a * clip(x) + b) : 0);
    case 2:
      return (x) => clip(clip(x) >= -b / a ? power(a * clip(x) + b) + c : c);
    case 3:
      return (x) => clip(clip(x) >= d ? power(a * clip(x) + b) : c * clip(x));
    default:
      return (x) => clip(clip(x) >= d ? power(a * clip(x) + b) + e : c * clip(x) + f);
  }
}

function align4(n: number): number {
  return (n + 3) & ~3;
}

/** A curve tag (TRC) by signature, or null when absent. Throws `damaged` if malformed. */
export function readCurveTag(tags: Map<string, Uint8Array>, signature: string): Curve | null {
  const tag = tags.get(signature);
  return tag ? readCurve(tag).curve : null;
}

/** The curve sampled at the 256 8-bit inputs. */
export function sample256(curve: Curve): Float64Array {
  const table = new Float64Array(256);
  for (let i = 0; i < 256; i++) table[i] = curve(i / 255);
  return table;
}
