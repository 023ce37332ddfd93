import type { Codec } from './codecs/codec';
import { avifCodec } from './codecs/avif';
import { jpegCodec } from './codecs/jpeg';
import { pngCodec } from './codecs/png';
import { webpCodec } from './codecs/webp';
import type { ImageFormat } from './types';

export interface FormatInfo {
  /** Name used on the wire (`format` parameter, Result object, download URL). */
  name: 'jpg' | 'png' | 'webp' | 'avif';
  extension: string;
  mimeType: string;
  label: string;
  codec: Codec;
}

export const FORMATS: Record<ImageFormat, FormatInfo> = {
  jpeg: { name: 'jpg', extension: 'jpg', mimeType: 'image/jpeg', label: 'JPEG', codec: jpegCodec },
  png: { name: 'png', extension: 'png', mimeType: 'image/png', label: 'PNG', codec: pngCodec },
  webp: { name: 'webp', extension: 'webp', mimeType: 'image/webp', label: 'WebP', codec: webpCodec },
  avif: { name: 'avif', extension: 'avif', mimeType: 'image/avif', label: 'AVIF', codec: avifCodec },
};

export const OUTPUT_FORMAT_NAMES = ['webp', 'avif', 'jpg', 'png'] as const;
export type OutputFormatName = (typeof OUTPUT_FORMAT_NAMES)[number];

export function formatFromName(name: OutputFormatName): ImageFormat {
  return name === 'jpg' ? 'jpeg' : name;
}
