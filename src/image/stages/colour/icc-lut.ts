import { damaged, u16be, u32be, u8 } from '../../bytes';
import { type Clut, clutEvaluator, clutValueCount } from './clut';
import { labToXyz, type Vec3 } from './colorimetry';
import { clip, type Curve, readCurve, tableCurve } from './icc-curve';
import { s15Fixed16, tagType } from './icc';

/** Device values (0..1 each) -> PCS, decoded to XYZ D50 (white Y = 1). */
export interface DeviceToPcs {
  inputs: number;
  evaluate(input: ArrayLike<number>, out: Float64Array): void;
}

/** How a LUT's 0..1 outputs map to PCS numbers (ICC.1:2010 6.3.4 and annex A). */
type PcsEncoding = 'xyz' | 'lab' | 'lab-legacy16';

/** lut16Type table entry limits: more would be a hostile profile, fewer than 2 is invalid. */
const MAX_TABLE_ENTRIES = 4096;

/**
 * An AToB tag (lut8Type `mft1`, lut16Type `mft2` or lutAToBType `mAB `) with three outputs, as a
 * device -> XYZ D50 function. Throws `damaged` for malformed or unsupported tags.
 */
export function readAToB(tag: Uint8Array, pcs: 'XYZ ' | 'Lab '): DeviceToPcs {
  const type = tagType(tag);
  const inputs = u8(tag, 8);
  const outputs = u8(tag, 9);
  if (inputs < 1 || inputs > 4 || outputs !== 3) throw damaged(`icc: ${type} with ${inputs} inputs, ${outputs} outputs`);
  const stages =
    type === 'mft1' || type === 'mft2' ? readLut8or16(tag, type, inputs)
    : type === 'mAB ' ? readLutAToB(tag, inputs)
    : null;
  if (!stages) throw damaged(`icc: AToB type ${JSON.stringify(type)}`);
  const encoding: PcsEncoding = pcs === 'XYZ ' ? 'xyz' : type === 'mft2' ? 'lab-legacy16' : 'lab';
  const device = new Float64Array(inputs);
  const values = new Float64Array(3);
  return {
    inputs,
    evaluate(input, out) {
      for (let i = 0; i < inputs; i++) device[i] = input[i];
      stages(device, values);
      const xyz = decodePcs(values, encoding);
      out[0] = xyz[0];
      out[1] = xyz[1];
      out[2] = xyz[2];
    },
  };
}

type Stages = (device: Float64Array, out: Float64Array) => void;

/** lut8Type/lut16Type: input tables -> CLUT -> output tables (the matrix applies only to XYZ input). */
function readLut8or16(tag: Uint8Array, type: 'mft1' | 'mft2', inputs: number): Stages {
  const wide = type === 'mft2';
  const grid = u8(tag, 10);
  const inEntries = wide ? u16be(tag, 48) : 256;
  const outEntries = wide ? u16be(tag, 50) : 256;
  for (const entries of [inEntries, outEntries]) {
    if (entries < 2 || entries > MAX_TABLE_ENTRIES) throw damaged(`icc: ${type} table of ${entries} entries`);
  }
  const clutValues = clutValueCount(new Array<number>(inputs).fill(grid), 3);
  let at = wide ? 52 : 48;
  const read = (count: number): Uint16Array => {
    const size = wide ? 2 : 1;
    if (at + count * size > tag.length) throw damaged(`icc: ${type} runs past its tag`);
    const out = new Uint16Array(count);
    for (let i = 0; i < count; i++) out[i] = wide ? u16be(tag, at + 2 * i) : u8(tag, at + i) * 257;
    at += count * size;
    return out;
  };
  const inputCurves = Array.from({ length: inputs }, () => tableCurve(scaled(read(inEntries))));
  const clut: Clut = { points: new Array<number>(inputs).fill(grid), outputs: 3, values: read(clutValues) };
  const outputCurves = Array.from({ length: 3 }, () => tableCurve(scaled(read(outEntries))));
  const evaluateClut = clutEvaluator(clut);
  return (device, out) => {
    for (let i = 0; i < inputs; i++) device[i] = inputCurves[i](device[i]);
    evaluateClut(device, out);
    for (let o = 0; o < 3; o++) out[o] = outputCurves[o](out[o]);
  };
}

/** lutAToBType: A curves -> CLUT -> M curves -> matrix -> B curves; every stage but B optional. */
function readLutAToB(tag: Uint8Array, inputs: number): Stages {
  const [bAt, matrixAt, mAt, clutAt, aAt] = [12, 16, 20, 24, 28].map((o) => u32be(tag, o));
  if (bAt === 0) throw damaged('icc: mAB without B curves');
  if (clutAt === 0 && inputs !== 3) throw damaged('icc: mAB without CLUT needs three inputs');
  const b = curveSet(tag, bAt, 3);
  const m = mAt ? curveSet(tag, mAt, 3) : null;
  const a = aAt ? curveSet(tag, aAt, inputs) : null;
  const matrix = matrixAt ? Array.from({ length: 12 }, (_, i) => s15Fixed16(tag, matrixAt + 4 * i)) : null;
  let evaluateClut: ReturnType<typeof clutEvaluator> | null = null;
  if (clutAt) {
    const points = Array.from({ length: inputs }, (_, i) => u8(tag, clutAt + i));
    const precision = u8(tag, clutAt + 16);
    if (precision !== 1 && precision !== 2) throw damaged(`icc: mAB CLUT precision ${precision}`);
    const count = clutValueCount(points, 3);
    const data = clutAt + 20;
    if (data + count * precision > tag.length) throw damaged('icc: mAB CLUT runs past its tag');
    const values = new Uint16Array(count);
    for (let i = 0; i < count; i++) values[i] = precision === 2 ? u16be(tag, data + 2 * i) : u8(tag, data + i) * 257;
    evaluateClut = clutEvaluator({ points, outputs: 3, values });
  }
  const stage = new Float64Array(3);
  return (device, out) => {
    if (a) for (let i = 0; i < inputs; i++) device[i] = a[i](device[i]);
    if (evaluateClut) evaluateClut(device, out);
    else for (let i = 0; i < 3; i++) out[i] = clip(device[i]);
    if (m) for (let i = 0; i < 3; i++) out[i] = m[i](out[i]);
    if (matrix) {
      for (let r = 0; r < 3; r++) stage[r] = matrix[3 * r] * out[0] + matrix[3 * r + 1] * out[1] + matrix[3 * r + 2] * out[2] + matrix[9 + r];
      out.set(stage);
    }
    for (let i = 0; i < 3; i++) out[i] = b[i](out[i]);
  };
}

/** `count` consecutive curves (each padded to 4 bytes) starting at `offset`. */
function curveSet(tag: Uint8Array, offset: number, count: number): Curve[] {
  const curves: Curve[] = [];
  let at = offset;
  for (let i = 0; i < count; i++) {
    const { curve, size } = readCurve(tag, at);
    curves.push(curve);
    at += size;
  }
  return curves;
}

function scaled(table: Uint16Array): Float64Array {
  return Float64Array.from(table, (v) => v / 65535);
}

/** LUT outputs (0..1) -> XYZ D50. */
function decodePcs(v: Float64Array, encoding: PcsEncoding): Vec3 {
  if (encoding === 'xyz') {
    const scale = 65535 / 32768; // u1Fixed15: 0x8000 is 1.0
    return [v[0] * scale, v[1] * scale, v[2] * scale];
  }
  // Legacy 16-bit Lab (lut16Type, also in v4 profiles): 0xFF00 is L* 100 and a*/b* +127.
  const legacy = encoding === 'lab-legacy16' ? 65535 / 65280 : 1;
  return labToXyz(v[0] * legacy * 100, v[1] * legacy * 255 - 128, v[2] * legacy * 255 - 128);
}
