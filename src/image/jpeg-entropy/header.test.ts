import { describe, expect, it } from 'vitest';
import { readJpegHeader } from './header';
import { EVERY_DC_CATEGORY, dhtSegment } from './huffman';

/** A marker segment FF <marker> <length> <payload>. */
function segment(marker: number, payload: number[] = []): number[] {
  const length = payload.length + 2;
  return [0xff, marker, length >> 8, length & 0xff, ...payload];
}

const text = (s: string) => [...s].map((c) => c.charCodeAt(0));
const SOI = [0xff, 0xd8];
const DQT = segment(0xdb, [0x00, ...new Array(64).fill(1)]);
const DHT = [...dhtSegment([{ tableClass: 0, id: 0, spec: EVERY_DC_CATEGORY }, { tableClass: 1, id: 0, spec: EVERY_DC_CATEGORY }])];
const JFIF = segment(0xe0, [...text('JFIF\0'), 1, 1, 0, 0, 1, 0, 1, 0, 0]);
const adobe = (transform: number) => segment(0xee, [...text('Adobe'), 0, 100, 0, 0, 0, 0, transform]);
/** SOF: 8-bit, the size, components as [id, h, v]. */
const sof = (width: number, height: number, components: number[][], marker = 0xc0, precision = 8) =>
  segment(marker, [precision, height >> 8, height & 0xff, width >> 8, width & 0xff, components.length, ...components.flatMap(([id, h, v]) => [id, (h << 4) | v, 0])]);
const sos = (ids: number[], tail = [0, 63, 0]) => segment(0xda, [ids.length, ...ids.flatMap((id) => [id, 0x00]), ...tail]);
const YCC = [
  [1, 2, 2],
  [2, 1, 1],
  [3, 1, 1],
];
const jpeg = (...parts: number[][]) => new Uint8Array([...parts.flat(), 0x00, 0xff, 0xd9]);

describe('readJpegHeader', () => {
  it('reads the frame, tables, scan and colour segments', () => {
    const header = readJpegHeader(jpeg(SOI, JFIF, adobe(0), adobe(1), DQT, sof(33, 17, YCC), DHT, segment(0xdd, [0, 5]), sos([1, 2, 3])))!;
    expect(header).toMatchObject({ sofMarker: 0xc0, width: 33, height: 17, restartInterval: 5 });
    expect(header.components.map((c) => [c.id, c.h, c.v])).toEqual(YCC);
    expect(header.scan.map((s) => s.component)).toEqual([0, 1, 2]);
    expect(header.jfif).not.toBeNull();
    expect(header.adobe!.start).toBeGreaterThan(header.jfif!.start + JFIF.length); // the last Adobe segment counts
    expect(header.segments.map((s) => s.marker.toString(16))).toEqual(['e0', 'ee', 'ee', 'db', 'c0', 'c4', 'dd', 'da']);
  });

  it('takes JFIF and Adobe segments only as long as libjpeg does', () => {
    const short = readJpegHeader(jpeg(SOI, segment(0xe0, text('JFIF\0')), segment(0xee, text('Adobe')), DQT, sof(8, 8, [[1, 1, 1]]), DHT, sos([1])))!;
    expect([short.jfif, short.adobe]).toEqual([null, null]);
  });

  it('is null for what cannot be banded, or libjpeg would refuse', () => {
    const cases: Record<string, number[][]> = {
      'progressive': [SOI, DQT, sof(8, 8, YCC, 0xc2), DHT, sos([1, 2, 3])],
      'lossless': [SOI, DQT, sof(8, 8, YCC, 0xc3), DHT, sos([1, 2, 3])],
      'arithmetic': [SOI, DQT, sof(8, 8, YCC, 0xc9), DHT, sos([1, 2, 3])],
      '12-bit': [SOI, DQT, sof(8, 8, YCC, 0xc0, 12), DHT, sos([1, 2, 3])],
      'four components': [SOI, DQT, sof(8, 8, [...YCC, [4, 1, 1]]), DHT, sos([1, 2, 3, 4])],
      'height 0 (DNL)': [SOI, DQT, sof(8, 0, YCC), DHT, sos([1, 2, 3])],
      'wider than 65500': [SOI, DQT, sof(65501, 8, YCC), DHT, sos([1, 2, 3])],
      'a component per scan': [SOI, DQT, sof(8, 8, YCC), DHT, sos([1])],
      'a component twice': [SOI, DQT, sof(8, 8, YCC), DHT, sos([1, 1, 3])],
      'the same id twice': [SOI, DQT, sof(8, 8, [YCC[0], YCC[0], YCC[2]]), DHT, sos([1, 1, 3])],
      'fractional sampling (3 and 2)': [SOI, DQT, sof(8, 8, [[1, 3, 1], [2, 2, 1], [3, 1, 1]]), DHT, sos([1, 2, 3])],
      'a spectral selection': [SOI, DQT, sof(8, 8, YCC), DHT, sos([1, 2, 3], [0, 5, 0])],
      'no quantisation table': [SOI, sof(8, 8, YCC), DHT, sos([1, 2, 3])],
      'no Huffman table': [SOI, DQT, sof(8, 8, YCC), sos([1, 2, 3])],
      'SOS before SOF': [SOI, DQT, DHT, sos([1, 2, 3]), sof(8, 8, YCC)],
      'two SOFs': [SOI, DQT, sof(8, 8, YCC), sof(8, 8, YCC), DHT, sos([1, 2, 3])],
      'a stray byte between segments': [SOI, DQT, [0x00], sof(8, 8, YCC), DHT, sos([1, 2, 3])],
      'DRI of the wrong length': [SOI, DQT, sof(8, 8, YCC), DHT, segment(0xdd, [0, 5, 0]), sos([1, 2, 3])],
      'DAC': [SOI, DQT, sof(8, 8, YCC), DHT, segment(0xcc, [0, 0]), sos([1, 2, 3])],
      'a segment past the end': [SOI, DQT, sof(8, 8, YCC), [0xff, 0xe1, 0xff, 0xff]],
      '1001 comments': [SOI, ...new Array(1001).fill(segment(0xfe, [0])), DQT, sof(8, 8, YCC), DHT, sos([1, 2, 3])],
    };
    expect(readJpegHeader(jpeg(SOI, DQT, sof(8, 8, YCC), DHT, sos([1, 2, 3])))).not.toBeNull();
    for (const [what, parts] of Object.entries(cases)) expect(readJpegHeader(jpeg(...parts)), what).toBeNull();
    expect(readJpegHeader(new Uint8Array(0))).toBeNull();
  });
});
