import { damaged } from '../../bytes';

/** What an AV1 sequence header (AV1 spec 5.5) says about the frames that follow it. */
export interface SequenceHeader {
  profile: number;
  /** Frames are at most this large (the decoder refuses larger ones). */
  maxWidth: number;
  maxHeight: number;
  bitDepth: 8 | 10 | 12;
  monochrome: boolean;
  subsamplingX: 0 | 1;
  subsamplingY: 0 | 1;
  primaries: number;
  transfer: number;
  matrix: number;
  fullRange: boolean;
  /** Frames may carry film grain, which dav1d applies into a second picture. */
  filmGrain: boolean;
  /** Frames may be coded narrower and upscaled (superres): dav1d decodes into a second picture. */
  superres: boolean;
  /** Superblocks are 128 px (else 64): what a windowed decode's buffer holds rows of. */
  superblock128: boolean;
  /** seq_force_screen_content_tools: 0 never, 1 always, 2 each frame header says (allow_screen_content_tools). */
  screenContentTools: 0 | 1 | 2;
  /** reduced_still_picture_header: one key frame, whose header leaves out the fields before disable_cdf_update. */
  reducedStillPicture: boolean;
  /** Bits of frame_presentation_time in a shown frame's header (temporal_point_info), 0 when there is none. */
  presentationTimeBits: number;
}

const SELECT_SCREEN_CONTENT_TOOLS = 2;
const KEY_FRAME = 0;
const SWITCH_FRAME = 3;

const OBU_SEQUENCE_HEADER = 1;
const OBU_FRAME_HEADER = 3;
const OBU_FRAME = 6;
const OBU_REDUNDANT_FRAME_HEADER = 7;

/**
 * The first sequence header OBU in `data` (low-overhead bitstream format: an item's data, a sample,
 * av1C configOBUs), or null when there is none before the data ends. Damage: broken OBU framing, a
 * frame before any sequence header, a truncated header.
 */
export function readSequenceHeader(data: Uint8Array): SequenceHeader | null {
  for (const { type, payload, complete } of obus(data)) {
    // Only the head of an item is read: a sequence header cut off there is not damage yet.
    if (type === OBU_SEQUENCE_HEADER) return parseSequenceHeader(payload);
    if (!complete) return null;
    if (type === OBU_FRAME_HEADER || type === OBU_FRAME || type === OBU_REDUNDANT_FRAME_HEADER) throw damaged('av1: frame before any sequence header');
  }
  return null;
}

/** The OBUs of `data` in order, each payload cut at the end of `data` (`complete` false then). Damage: broken framing. */
function* obus(data: Uint8Array): Generator<{ type: number; payload: Uint8Array; complete: boolean }> {
  for (let at = 0; at < data.length; ) {
    const header = data[at];
    if (header & 0x80) throw damaged('av1: OBU forbidden bit set');
    let payload = at + 1 + ((header & 4) !== 0 ? 1 : 0);
    let size = data.length - payload;
    if (header & 2) {
      const leb = readLeb128(data, payload);
      payload = leb.end;
      size = leb.value;
    }
    const complete = payload <= data.length && size <= data.length - payload;
    yield { type: (header >> 3) & 15, payload: data.subarray(payload, complete ? payload + size : data.length), complete };
    at = payload + size;
  }
}

function readLeb128(data: Uint8Array, from: number): { value: number; end: number } {
  let value = 0;
  for (let i = 0; i < 8; i++) {
    if (from + i >= data.length) return { value: 2 ** 53, end: data.length }; // runs past the data
    const byte = data[from + i];
    value += (byte & 0x7f) * 2 ** (7 * i);
    if (!(byte & 0x80)) return { value, end: from + i + 1 };
  }
  throw damaged('av1: OBU size longer than 8 bytes');
}

/** sequence_header_obu() (AV1 spec 5.5.1) up to color_config(). */
function parseSequenceHeader(payload: Uint8Array): SequenceHeader {
  const bits = new BitReader(payload);
  const profile = bits.read(3);
  if (profile > 2) throw damaged(`av1: seq_profile ${profile}`);
  bits.read(1); // still_picture
  const reduced = bits.flag();
  let presentationTimeBits = 0;
  if (reduced) {
    bits.read(5); // seq_level_idx[0]
  } else {
    let decoderModelInfo = false;
    let bufferDelayLength = 0;
    if (bits.flag()) {
      bits.read(32); // num_units_in_display_tick
      bits.read(32); // time_scale
      const equalPictureInterval = bits.flag();
      if (equalPictureInterval) bits.uvlc(); // num_ticks_per_picture_minus_1
      decoderModelInfo = bits.flag();
      if (decoderModelInfo) {
        bufferDelayLength = bits.read(5) + 1;
        bits.read(32); // num_units_in_decoding_tick
        bits.read(5); // buffer_removal_time_length_minus_1
        const presentationTimeLength = bits.read(5) + 1;
        if (!equalPictureInterval) presentationTimeBits = presentationTimeLength;
      }
    }
    const initialDisplayDelay = bits.flag();
    const operatingPoints = bits.read(5) + 1;
    for (let i = 0; i < operatingPoints; i++) {
      bits.read(12); // operating_point_idc
      if (bits.read(5) > 7) bits.read(1); // seq_level_idx, seq_tier
      if (decoderModelInfo && bits.flag()) bits.read(2 * bufferDelayLength + 1);
      if (initialDisplayDelay && bits.flag()) bits.read(4);
    }
  }
  const widthBits = bits.read(4) + 1;
  const heightBits = bits.read(4) + 1;
  const maxWidth = bits.read(widthBits) + 1;
  const maxHeight = bits.read(heightBits) + 1;
  if (!reduced && bits.flag()) bits.read(7); // frame id numbers: delta and additional lengths
  const superblock128 = bits.flag();
  bits.read(2); // enable_filter_intra, enable_intra_edge_filter
  let screenContentTools: 0 | 1 | 2 = SELECT_SCREEN_CONTENT_TOOLS;
  if (!reduced) {
    bits.read(4); // interintra, masked compound, warped motion, dual filter
    const orderHint = bits.flag();
    if (orderHint) bits.read(2); // jnt_comp, ref_frame_mvs
    screenContentTools = bits.flag() ? SELECT_SCREEN_CONTENT_TOOLS : (bits.read(1) as 0 | 1);
    if (screenContentTools > 0 && !bits.flag()) bits.read(1); // seq_force_integer_mv
    if (orderHint) bits.read(3); // order_hint_bits_minus_1
  }
  const superres = bits.flag();
  bits.read(2); // enable_cdef, enable_restoration
  const color = colorConfig(bits, profile);
  return { profile, maxWidth, maxHeight, ...color, filmGrain: bits.flag(), superres, superblock128, screenContentTools, reducedStillPicture: reduced, presentationTimeBits };
}

/**
 * Whether the first frame in `data` (after `sequence`, its sequence header) may use intra block copy,
 * for which dav1d needs the whole picture. Read from its uncompressed_header (AV1 spec 5.9.2): to
 * allow_intrabc in a reduced still picture header (what AVIF encoders write); in a full one only
 * to allow_screen_content_tools, without which there is none. A frame header that is not in
 * `data`, not a frame's first or cut short may (the decoder will find out).
 */
export function firstFrameMayCopyIntraBlocks(data: Uint8Array, sequence: SequenceHeader): boolean {
  if (sequence.screenContentTools !== SELECT_SCREEN_CONTENT_TOOLS) return sequence.screenContentTools === 1;
  try {
    for (const { type, payload } of obus(data)) {
      if (type === OBU_FRAME_HEADER || type === OBU_FRAME) return frameMayCopyIntraBlocks(new BitReader(payload), sequence);
    }
  } catch {
    // Broken framing or a header cut short: the decoder reports what is wrong.
  }
  return true;
}

/** uncompressed_header() up to allow_intrabc, for a sequence that lets each frame choose its screen content tools. */
function frameMayCopyIntraBlocks(bits: BitReader, sequence: SequenceHeader): boolean {
  if (!sequence.reducedStillPicture) {
    if (bits.flag()) return true; // show_existing_frame: shows a frame decoded before
    const frameType = bits.read(2);
    const showFrame = bits.flag();
    if (showFrame) bits.read(sequence.presentationTimeBits); // temporal_point_info
    else bits.read(1); // showable_frame
    if (frameType !== SWITCH_FRAME && !(frameType === KEY_FRAME && showFrame)) bits.read(1); // error_resilient_mode
  }
  bits.read(1); // disable_cdf_update
  if (!bits.flag()) return false; // allow_screen_content_tools
  // The rest of a full header depends on much more of the sequence: taken as allowing it.
  if (!sequence.reducedStillPicture) return true;
  // A key frame at the sequence's size: force_integer_mv (seq_force_integer_mv is SELECT), then
  // frame_size()'s use_superres, render_size(), and allow_intrabc where the frame is not upscaled.
  bits.read(1);
  if (sequence.superres && bits.flag()) return false;
  if (bits.flag()) bits.read(32); // render_width_minus_1, render_height_minus_1
  return bits.flag();
}

/** color_config() (AV1 spec 5.5.2). */
function colorConfig(bits: BitReader, profile: number) {
  const highBitDepth = bits.flag();
  const bitDepth: 8 | 10 | 12 = profile === 2 && highBitDepth ? (bits.flag() ? 12 : 10) : highBitDepth ? 10 : 8;
  const monochrome = profile === 1 ? false : bits.flag();
  let [primaries, transfer, matrix] = [2, 2, 2];
  if (bits.flag()) [primaries, transfer, matrix] = [bits.read(8), bits.read(8), bits.read(8)];
  let subsamplingX: 0 | 1 = 1;
  let subsamplingY: 0 | 1 = 1;
  let fullRange: boolean;
  if (monochrome) {
    fullRange = bits.flag();
    return { bitDepth, monochrome, subsamplingX, subsamplingY, primaries, transfer, matrix, fullRange };
  } else if (primaries === 1 && transfer === 13 && matrix === 0) {
    fullRange = true;
    subsamplingX = subsamplingY = 0;
  } else {
    fullRange = bits.flag();
    if (profile === 1) {
      subsamplingX = subsamplingY = 0;
    } else if (profile === 2) {
      if (bitDepth === 12) {
        subsamplingX = bits.read(1) as 0 | 1;
        subsamplingY = subsamplingX ? (bits.read(1) as 0 | 1) : 0;
      } else {
        subsamplingY = 0;
      }
    }
    if (subsamplingX && subsamplingY) bits.read(2); // chroma_sample_position
  }
  bits.read(1); // separate_uv_delta_q
  return { bitDepth, monochrome, subsamplingX, subsamplingY, primaries, transfer, matrix, fullRange };
}

/** Big-endian bit reader over a bounded payload; reading past its end is damage. */
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

  flag(): boolean {
    return this.read(1) === 1;
  }

  /** uvlc() (AV1 spec 4.10.3). */
  uvlc(): number {
    let leadingZeros = 0;
    while (!this.flag()) {
      if (++leadingZeros >= 32) throw damaged('av1: uvlc longer than 32 bits');
    }
    return this.read(leadingZeros) + 2 ** leadingZeros - 1;
  }
}
