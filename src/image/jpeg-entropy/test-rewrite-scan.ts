/**
 * Test tools (imported by tests only, pure TypeScript): copies of a sequential JPEG whose scan is
 * coded differently but holds the same coefficients, for structures mozjpeg's encoder in jSquash
 * does not make: restart markers (the corpus holds only two such files), and a DC table whose
 * codes reach 16 bits.
 */
import { concat } from '../bytes';
import { BitWriter, category } from './bit-writer';
import { BlockReader } from './block-reader';
import { readJpegHeader } from './header';
import { AC, DC, dhtSegment, encodeTable, EVERY_DC_CATEGORY, type HuffmanSpec } from './huffman';
import { firstMcuOfImcuRow, scanDecodeTables, scanLayout } from './scan';

const DHT = 0xc4;
const DRI = 0xdd;
const SOS = 0xda;

/** Restart markers every `interval` MCUs (T.81 B.2.4.4); DC coded with a table of every category. */
export function withRestartMarkers(jpeg: Uint8Array, interval: number): Uint8Array {
  return rewriteScan(jpeg, interval, () => EVERY_DC_CATEGORY);
}

/**
 * One DC table for all components holding only the categories the scan uses, coded 1, 2, 3...
 * bits long and the last one 16 bits: no room is left in it for more codes.
 */
export function withDeepDcTable(jpeg: Uint8Array): Uint8Array {
  return rewriteScan(jpeg, 0, (used) => {
    const symbols = [...used].sort((a, b) => a - b);
    const counts = new Uint8Array(17);
    symbols.forEach((_, i) => counts[i === symbols.length - 1 ? 16 : i + 1]++);
    return { counts, symbols: Uint8Array.from(symbols) };
  });
}

function rewriteScan(jpeg: Uint8Array, interval: number, dcTable: (usedCategories: Set<number>) => HuffmanSpec): Uint8Array {
  const header = readJpegHeader(jpeg);
  const layout = header && scanLayout(header);
  const tables = header && scanDecodeTables(header);
  if (!header || !layout || !tables || header.restartInterval !== 0) throw new Error('rewriteScan: not a sequential JPEG without restarts');
  const { scan, segments, components } = header;
  const total = firstMcuOfImcuRow(layout, layout.imcuRows);

  /** Calls `visit` with every block's DC difference as the new scan codes it, and the reader at its AC bits. */
  const forEachBlock = (visit: (reader: BlockReader, component: number, diff: number) => void, atRestart: (mcu: number) => void) => {
    const reader = new BlockReader(jpeg, header.dataStart);
    const original = new Int32Array(3);
    const coded = new Int32Array(3);
    for (let mcu = 0; mcu < total; mcu++) {
      if (interval !== 0 && mcu !== 0 && mcu % interval === 0) {
        atRestart(mcu);
        coded.fill(0);
      }
      for (const c of layout.blockComponents) {
        const value = original[c] + reader.dc(tables.dc[c]);
        original[c] = value;
        visit(reader, c, value - coded[c]);
        coded[c] = value;
      }
    }
  };

  const used = new Set<number>();
  forEachBlock(
    (reader, c, diff) => {
      used.add(category(diff));
      reader.skipAc(tables.ac[c]);
    },
    () => undefined,
  );
  const dcSpec = dcTable(used);
  const acIds = [...new Set(scan.map((s) => s.acTable))];
  const dht = dhtSegment([{ tableClass: DC, id: 0, spec: dcSpec }, ...acIds.map((id) => ({ tableClass: AC, id, spec: header.huffman[AC][id]! }))]);
  const dri = interval === 0 ? new Uint8Array(0) : Uint8Array.of(0xff, DRI, 0, 4, interval >> 8, interval & 0xff);
  const sos = [0xff, SOS, 0, 6 + 2 * scan.length, scan.length, ...scan.flatMap((s) => [components[s.component].id, s.acTable]), 0, 63, 0];
  const kept = segments.filter((s) => s.marker !== DHT && s.marker !== SOS && s.marker !== DRI).map((s) => jpeg.subarray(s.start, s.end));

  const writer = new BitWriter(jpeg.length * 1.2 + 1024);
  writer.append(concat([Uint8Array.of(0xff, 0xd8), ...kept, dht, dri, Uint8Array.from(sos)]));
  const dcCodes = encodeTable(dcSpec, DC)!;
  const acCodes = scan.map((s) => encodeTable(header.huffman[AC][s.acTable]!, AC)!);
  forEachBlock(
    (reader, c, diff) => {
      writer.writeDc(dcCodes, diff);
      reader.copyAc(tables.ac[c], acCodes[c], writer);
    },
    (mcu) => {
      writer.padToByte();
      writer.append(Uint8Array.of(0xff, 0xd0 + ((mcu / interval - 1) & 7)));
    },
  );
  writer.padToByte();
  writer.append(Uint8Array.of(0xff, 0xd9));
  return writer.finish();
}
