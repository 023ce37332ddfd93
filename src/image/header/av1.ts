import { damaged } from '../bytes';
import type { Dimensions } from '../types';

/** OBU types (AV1 spec 6.2.2) that matter before the sequence header. */
const OBU_SEQUENCE_HEADER = 1;
const OBU_FRAME_HEADER = 3;
const OBU_FRAME = 6;
const OBU_REDUNDANT_FRAME_HEADER = 7;

/**
 * The maximum frame size of the first sequence header OBU in `data` (a low-overhead AV1 bitstream:
 * an AVIF item's data, a sample, or av1C configOBUs). The decoder (libaom behind libavif) sizes its
 * frame buffers from it and refuses frames larger than it ("Frame dimensions are larger than the
 * maximum values"), so it bounds what decoding the data can allocate. Throws `damaged` for broken
 * OBUs or a frame before any sequence header; returns null for data without one (empty configOBUs).
 */
export function readAv1MaxFrameSize(data: Uint8Array): Dimensions | null {
  let at = 0;
  while (at < data.length) {
    const header = data[at];
    if (header & 0x80) throw damaged('av1: OBU forbidden bit set');
    const type = (header >> 3) & 0x0f;
    const hasExtension = (header & 0x04) !== 0;
    const hasSize = (header & 0x02) !== 0;
    let payload = at + 1 + (hasExtension ? 1 : 0);
    let size = data.length - payload;
    if (hasSize) {
      const leb = readLeb128(data, payload);
      payload = leb.end;
      size = leb.value;
    }
    if (payload > data.length || size > data.length - payload) throw damaged(`av1: OBU type ${type} runs past the data`);
    if (type === OBU_SEQUENCE_HEADER) return readSequenceHeader(data.subarray(payload, payload + size));
    if (type === OBU_FRAME_HEADER || type === OBU_FRAME || type === OBU_REDUNDANT_FRAME_HEADER) {
      throw damaged('av1: frame before any sequence header');
    }
    at = payload + size;
  }
  return null;
}

function readLeb128(data: Uint8Array, from: number): { value: number; end: number } {
  let value = 0;
  for (let i = 0; i < 8; i++) {
    if (from + i >= data.length) throw damaged('av1: truncated OBU size');
    const byte = data[from + i];
    value += (byte & 0x7f) * 2 ** (7 * i);
    if (!(byte & 0x80)) return { value, end: from + i + 1 };
  }
  throw damaged('av1: OBU size longer than 8 bytes');
}

/** sequence_header_obu() up to max_frame_height_minus_1 (AV1 spec 5.5.1). */
function readSequenceHeader(payload: Uint8Array): Dimensions {
  const bits = new BitReader(payload);
  const profile = bits.read(3);
  if (profile > 2) throw damaged(`av1: seq_profile ${profile}`);
  bits.read(1); // still_picture
  const reduced = bits.read(1) === 1;
  if (reduced) {
    bits.read(5); // seq_level_idx[0]
  } else {
    let decoderModelInfo = false;
    let bufferDelayLength = 0;
    if (bits.read(1)) {
      // timing_info()
      bits.read(32); // num_units_in_display_tick
      bits.read(32); // time_scale
      if (bits.read(1)) bits.uvlc(); // equal_picture_interval: num_ticks_per_picture_minus_1
      decoderModelInfo = bits.read(1) === 1;
      if (decoderModelInfo) {
        bufferDelayLength = bits.read(5) + 1;
        bits.read(32); // num_units_in_decoding_tick
        bits.read(5); // buffer_removal_time_length_minus_1
        bits.read(5); // frame_presentation_time_length_minus_1
      }
    }
    const initialDisplayDelay = bits.read(1) === 1;
    const operatingPoints = bits.read(5) + 1;
    for (let i = 0; i < operatingPoints; i++) {
      bits.read(12); // operating_point_idc
      if (bits.read(5) > 7) bits.read(1); // seq_level_idx, seq_tier
      if (decoderModelInfo && bits.read(1)) {
        bits.read(bufferDelayLength); // decoder_buffer_delay
        bits.read(bufferDelayLength); // encoder_buffer_delay
        bits.read(1); // low_delay_mode_flag
      }
      if (initialDisplayDelay && bits.read(1)) bits.read(4);
    }
  }
  const widthBits = bits.read(4) + 1;
  const heightBits = bits.read(4) + 1;
  return { width: bits.read(widthBits) + 1, height: bits.read(heightBits) + 1 };
}

/** Big-endian bit reader over a bounded payload; reading past its end throws `damaged`. */
class BitReader {
  private position = 0;

  constructor(private readonly bytes: Uint8Array) {}

  /** An unsigned value of `count` (0..32) bits. */
  read(count: number): number {
    let value = 0;
    for (let i = 0; i < count; i++) {
      const byte = this.position >> 3;
      if (byte >= this.bytes.length) throw damaged('av1: truncated sequence header');
      value = value * 2 + ((this.bytes[byte] >> (7 - (this.position & 7))) & 1);
      this.position++;
    }
    return value;
  }

  /** uvlc() (AV1 spec 4.10.3). */
  uvlc(): number {
    let leadingZeros = 0;
    while (this.read(1) === 0) {
      leadingZeros++;
      if (leadingZeros >= 32) throw damaged('av1: uvlc longer than 32 bits');
    }
    return this.read(leadingZeros) + 2 ** leadingZeros - 1;
  }
}
