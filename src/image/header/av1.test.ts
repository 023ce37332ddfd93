import { describe, expect, it } from 'vitest';
import { expectAppError } from '../../../test/support/image-testing';
import { readAv1MaxFrameSize } from './av1';

/** Bits ('0'/'1', spaces ignored) padded to whole bytes. */
const bytesOf = (bits: string) => {
  const clean = bits.replace(/ /g, '');
  return (clean + '0'.repeat((8 - (clean.length % 8)) % 8)).match(/.{8}/g)!.map((byte) => parseInt(byte, 2));
};
const obu = (type: number, payload: number[]) => [(type << 3) | 0x02, payload.length, ...payload];
const bin = (value: number, width: number) => value.toString(2).padStart(width, '0');

describe('readAv1MaxFrameSize', () => {
  it('reads a full sequence header with timing, decoder model and two operating points', () => {
    const header = bytesOf(
      '000 0 0' + // seq_profile, still_picture, reduced_still_picture_header
        ' 1' + bin(1, 32) + bin(25, 32) + ' 1 1' + // timing_info, equal_picture_interval, uvlc 0
        ' 1 00011' + bin(1, 32) + ' 00100 00101' + // decoder_model_info: buffer_delay_length 4
        ' 1 00001' + // initial_display_delay_present, 2 operating points
        bin(0x101, 12) + ' 01000 1' + ' 1 0110 1001 1' + ' 1 0011' + // level 8 (tier), model 4+4+1 bits, delay
        bin(0, 12) + ' 00000' + ' 0' + ' 0' +
        ' 1011 1010' + bin(3999, 12) + bin(2047, 11), // frame_width_bits 12, frame_height_bits 11
    );
    expect(readAv1MaxFrameSize(new Uint8Array([...obu(2, []), ...obu(5, [1, 2, 3]), ...obu(1, header)]))).toEqual({ width: 4000, height: 2048 });
  });

  it('reads a reduced still-picture header, skipping an extension byte, and needs no size field for the last OBU', () => {
    const header = bytesOf('000 1 1 01000 0000 0000 0 0');
    expect(readAv1MaxFrameSize(new Uint8Array([0x0e, 0x00, header.length, ...header]))).toEqual({ width: 1, height: 1 });
    expect(readAv1MaxFrameSize(new Uint8Array([0x08, ...header]))).toEqual({ width: 1, height: 1 });
    expect(readAv1MaxFrameSize(new Uint8Array([...obu(2, [])]))).toBeNull();
  });

  it('throws UNSUPPORTED_FORMAT for truncated or broken OBUs', () => {
    for (const input of [[0x0a, 5, 0x18], [0x0a, 1, 0x18], [0x8a, 0], [0x0a, 0x80], [0x32, 0], [0x0a, 3, 0xe0, 0, 0]]) {
      expectAppError(() => readAv1MaxFrameSize(new Uint8Array(input)), 'UNSUPPORTED_FORMAT');
    }
  });
});
