import { AC, DC, decodeTable, type DecodeTable } from './huffman';
import type { JpegHeader } from './header';

/**
 * How the scan's blocks are laid out (T.81 A.2): MCUs in raster order, each MCU the blocks of
 * every scan component in turn (h × v of them, in raster order). A one-component scan is not
 * interleaved: its MCU is one block, and an iMCU row (the rows libjpeg decodes together, and the
 * unit bands are made of) is v block rows.
 */
export interface ScanLayout {
  /** Scan component (index into `header.scan`) of each block of an MCU, in coding order. */
  blockComponents: Uint8Array;
  mcusPerRow: number;
  /** MCU rows of the scan. */
  mcuRows: number;
  /** MCU rows per iMCU row. */
  mcuRowsPerImcu: number;
  /** Image rows per iMCU row: 8 × the largest vertical sampling factor. */
  imcuHeight: number;
  imcuRows: number;
  /** Some component has fewer rows than the image, so libjpeg's upsampling reads the rows above and below. */
  verticallySubsampled: boolean;
}

/** libjpeg's D_MAX_BLOCKS_IN_MCU. */
const MAX_BLOCKS_IN_MCU = 10;

export function scanLayout(header: Pick<JpegHeader, 'width' | 'height' | 'components' | 'scan'>): ScanLayout | null {
  const { width, height, components, scan } = header;
  const hMax = Math.max(...components.map((c) => c.h));
  const vMax = Math.max(...components.map((c) => c.v));
  const imcuHeight = 8 * vMax;
  const imcuRows = Math.ceil(height / imcuHeight);
  const verticallySubsampled = components.some((c) => c.v < vMax);
  if (scan.length === 1) {
    // Only one component (scans must hold them all): its size is the image's.
    const v = components[scan[0].component].v;
    return {
      blockComponents: Uint8Array.of(0),
      mcusPerRow: Math.ceil(width / 8),
      mcuRows: Math.ceil(height / 8),
      mcuRowsPerImcu: v,
      imcuHeight,
      imcuRows,
      verticallySubsampled,
    };
  }
  const blocks: number[] = [];
  scan.forEach((s, i) => {
    const { h, v } = components[s.component];
    for (let b = 0; b < h * v; b++) blocks.push(i);
  });
  if (blocks.length > MAX_BLOCKS_IN_MCU) return null;
  return {
    blockComponents: Uint8Array.from(blocks),
    mcusPerRow: Math.ceil(width / (8 * hMax)),
    mcuRows: imcuRows,
    mcuRowsPerImcu: 1,
    imcuHeight,
    imcuRows,
    verticallySubsampled,
  };
}

/** Index of the first MCU of iMCU row `row` (the MCU count for `row` = imcuRows). */
export function firstMcuOfImcuRow(layout: ScanLayout, row: number): number {
  return Math.min(row * layout.mcuRowsPerImcu, layout.mcuRows) * layout.mcusPerRow;
}

/** The decoding tables of each scan component, DC and AC; null if libjpeg would refuse one. */
export function scanDecodeTables(header: JpegHeader): { dc: DecodeTable[]; ac: DecodeTable[] } | null {
  const dc: DecodeTable[] = [];
  const ac: DecodeTable[] = [];
  for (const s of header.scan) {
    const dcTable = decodeTable(header.huffman[DC][s.dcTable]!, DC);
    const acTable = decodeTable(header.huffman[AC][s.acTable]!, AC);
    if (!dcTable || !acTable) return null;
    dc.push(dcTable);
    ac.push(acTable);
  }
  return { dc, ac };
}
