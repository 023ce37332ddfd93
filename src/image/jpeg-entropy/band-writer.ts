import { concat } from '../bytes';
import { READER_STATE_SIZE, savedPosition } from './bit-reader';
import { BitWriter, category } from './bit-writer';
import { BlockReader } from './block-reader';
import type { JpegHeader } from './header';
import { AC, DC, dhtSegment, encodeTable, EVERY_DC_CATEGORY, withExtraSymbols, type DecodeTable, type EncodeTable, type HuffmanSpec } from './huffman';
import { firstMcuOfImcuRow, type ScanLayout } from './scan';

/** Per iMCU row: the reader's state and the DC predictors of up to three components. */
export const CHECKPOINT_SIZE = READER_STATE_SIZE + 3;

const SOS = 0xda;
const EOI = Uint8Array.of(0xff, 0xd9);

/**
 * Builds band JPEGs from a file whose scan `planJpegBands` has read: SOI, the JFIF and Adobe
 * segments (libjpeg picks the colour transform from them), DQT, the SOF with the band's height,
 * DHT, SOS, the band's scan data, EOI.
 *
 * A band's DC differences start again from 0 (T.81 F.1.2.1), so only the first block of each
 * component is coded differently from the original: after the band's first MCU the original
 * bits are copied as they are. The first blocks may need a DC category the original (optimised)
 * table has no code for; it gets one in the band's table, in the code space libjpeg's tables
 * leave free. Where that does not fit, or the file has restart markers (which bands drop, so the
 * DC differences after each change), every block is coded again, DC with a table that covers
 * every category.
 */
export class BandWriter {
  /** SOI to SOF, and where the SOF's height goes. */
  private readonly head: Uint8Array;
  private readonly heightAt: number;
  private readonly dc: DecodeTable[];
  private readonly ac: DecodeTable[];
  private readonly acCodes: EncodeTable[];

  constructor(
    private readonly bytes: Uint8Array,
    private readonly header: JpegHeader,
    private readonly layout: ScanLayout,
    tables: { dc: DecodeTable[]; ac: DecodeTable[] },
    private readonly checkpoints: Float64Array,
  ) {
    const { segments, jfif, adobe, quant, components, scan } = header;
    const sof = segments.find((s) => s.marker === header.sofMarker)!;
    const copy = (s: { start: number; end: number } | null) => (s ? bytes.subarray(s.start, s.end) : new Uint8Array(0));
    const quantIds = [...new Set(components.map((c) => c.quantTable))];
    const dqtBody = concat(quantIds.map((id) => quant[id]!));
    const dqt = concat([Uint8Array.of(0xff, 0xdb, (dqtBody.length + 2) >> 8, (dqtBody.length + 2) & 0xff), dqtBody]);
    const beforeSof = [Uint8Array.of(0xff, 0xd8), copy(jfif), copy(adobe), dqt];
    this.head = concat([...beforeSof, copy(sof)]);
    this.heightAt = beforeSof.reduce((sum, p) => sum + p.length, 0) + (header.heightOffset - sof.start);
    this.dc = tables.dc;
    this.ac = tables.ac;
    this.acCodes = scan.map((s) => encodeTable(header.huffman[AC][s.acTable]!, AC)!);
  }

  /** The JPEG of iMCU rows [from, to). */
  band(from: number, to: number): Uint8Array {
    return (this.header.restartInterval === 0 && this.copied(from, to)) || this.recoded(from, to);
  }

  private readerAt(row: number): BlockReader {
    const reader = new BlockReader(this.bytes, this.header.dataStart);
    reader.restore(this.checkpoints, row * CHECKPOINT_SIZE);
    return reader;
  }

  /** The absolute DC values at the start of iMCU row `row`, by scan component. */
  private predictorsAt(row: number): Int32Array {
    const at = row * CHECKPOINT_SIZE + READER_STATE_SIZE;
    return Int32Array.from(this.checkpoints.subarray(at, at + 3));
  }

  /** A writer holding the band's markers up to its scan data. */
  private start(from: number, to: number, dht: Uint8Array, sos: Uint8Array): BitWriter {
    const { checkpoints, layout, header } = this;
    const height = Math.min(to * layout.imcuHeight, header.height) - from * layout.imcuHeight;
    const dataBytes = checkpoints[to * CHECKPOINT_SIZE] - checkpoints[from * CHECKPOINT_SIZE];
    const writer = new BitWriter(this.head.length + dht.length + sos.length + dataBytes * 1.02 + 1024);
    const head = this.head.slice();
    head[this.heightAt] = height >> 8;
    head[this.heightAt + 1] = height & 0xff;
    writer.append(head);
    writer.append(dht);
    writer.append(sos);
    return writer;
  }

  /** The band with its first MCU coded again and the rest copied, or null if its DC codes do not fit. */
  private copied(from: number, to: number): Uint8Array | null {
    const { header, layout } = this;
    const { scan } = header;
    const { blockComponents } = layout;

    // The first block of each component codes its whole DC value.
    const firstValues = new Map<number, number>();
    const peek = this.readerAt(from);
    const predictors = this.predictorsAt(from);
    for (const c of blockComponents) {
      const value = predictors[c] + peek.dc(this.dc[c]);
      predictors[c] = value;
      if (!firstValues.has(c)) firstValues.set(c, value);
      peek.skipAc(this.ac[c]);
    }
    const dcSpecs = new Map<number, HuffmanSpec>();
    for (const { dcTable } of scan) {
      const spec = header.huffman[DC][dcTable]!;
      const needed = scan.flatMap((s, c) => (s.dcTable === dcTable ? [category(firstValues.get(c)!)] : []));
      const missing = [...new Set(needed)].filter((size) => !spec.symbols.includes(size));
      const extended = withExtraSymbols(spec, missing);
      if (!extended) return null;
      dcSpecs.set(dcTable, extended);
    }
    const dcCodes = scan.map((s) => encodeTable(dcSpecs.get(s.dcTable)!, DC)!);

    const sos = header.segments.find((s) => s.marker === SOS)!;
    const writer = this.start(from, to, this.dht(dcSpecs), this.bytes.subarray(sos.start, sos.end));
    const reader = this.readerAt(from);
    const original = this.predictorsAt(from);
    const coded = new Int32Array(3);
    for (const c of blockComponents) {
      const value = original[c] + reader.dc(this.dc[c]);
      original[c] = value;
      writer.writeDc(dcCodes[c], value - coded[c]);
      coded[c] = value;
      reader.copyAc(this.ac[c], this.acCodes[c], writer);
    }
    reader.copyBits(writer, savedPosition(this.checkpoints, to * CHECKPOINT_SIZE) - reader.position);
    writer.padToByte();
    writer.append(EOI);
    return writer.finish();
  }

  /** The band with every block coded again, without restart markers. */
  private recoded(from: number, to: number): Uint8Array {
    const { header, layout } = this;
    const { scan, components } = header;
    const dcCodes = encodeTable(EVERY_DC_CATEGORY, DC)!;
    const dht = this.dht(new Map(scan.map((s) => [s.dcTable, EVERY_DC_CATEGORY])));
    const sos = [0xff, SOS, 0, 6 + 2 * scan.length, scan.length];
    for (const s of scan) sos.push(components[s.component].id, (s.dcTable << 4) | s.acTable);
    sos.push(0, 63, 0);
    const writer = this.start(from, to, dht, Uint8Array.from(sos));

    const reader = this.readerAt(from);
    const original = this.predictorsAt(from);
    const coded = new Int32Array(3);
    const { blockComponents } = layout;
    const interval = header.restartInterval;
    const firstMcu = firstMcuOfImcuRow(layout, from);
    const endMcu = firstMcuOfImcuRow(layout, to);
    for (let mcu = firstMcu; mcu < endMcu; mcu++) {
      // The checkpoint is past any restart marker before the band's first MCU.
      if (interval !== 0 && mcu % interval === 0 && mcu !== firstMcu) {
        reader.restart((mcu / interval - 1) & 7);
        original.fill(0);
      }
      for (let b = 0; b < blockComponents.length; b++) {
        const c = blockComponents[b];
        const value = original[c] + reader.dc(this.dc[c]);
        original[c] = value;
        writer.writeDc(dcCodes, value - coded[c]);
        coded[c] = value;
        reader.copyAc(this.ac[c], this.acCodes[c], writer);
      }
    }
    writer.padToByte();
    writer.append(EOI);
    return writer.finish();
  }

  /** The DC tables given (by id) and the original AC tables, in libjpeg's order. */
  private dht(dcSpecs: Map<number, HuffmanSpec>): Uint8Array {
    const tables: { tableClass: number; id: number; spec: HuffmanSpec }[] = [];
    for (const s of this.header.scan) {
      if (!tables.some((t) => t.tableClass === DC && t.id === s.dcTable)) tables.push({ tableClass: DC, id: s.dcTable, spec: dcSpecs.get(s.dcTable)! });
      if (!tables.some((t) => t.tableClass === AC && t.id === s.acTable)) tables.push({ tableClass: AC, id: s.acTable, spec: this.header.huffman[AC][s.acTable]! });
    }
    return dhtSegment(tables);
  }
}
