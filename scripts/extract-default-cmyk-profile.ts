/**
 * Writes src/image/stages/colour/default-cmyk.icc: the CMYK profile assumed for a CMYK JPEG that embeds
 * none. It is libvips' built-in CMYK profile ("Chemical proof" by Graeme W. Gill, ArgyllCMS,
 * released into the public domain), so such files look as they do in libvips, sharp and imgproxy.
 * The original is 961 KB; only what a CMYK -> sRGB conversion reads is kept (header, desc, cprt,
 * wtpt and the perceptual A2B0 table, a 9^4 lut16): about 54 KB.
 *
 *   npx node scripts/extract-default-cmyk-profile.ts
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';

const KEPT_TAGS = ['desc', 'cprt', 'wtpt', 'A2B0'];
const output = path.resolve(import.meta.dirname, '../src/image/stages/colour/default-cmyk.icc');

async function libvipsCmykProfile(): Promise<Buffer> {
  const jpeg = await sharp({ create: { width: 1, height: 1, channels: 3, background: '#808080' } })
    .toColourspace('cmyk')
    .withIccProfile('cmyk')
    .jpeg()
    .toBuffer();
  const { icc } = await sharp(jpeg).metadata();
  if (!icc) throw new Error('sharp embedded no CMYK profile');
  return icc;
}

function trimmed(profile: Buffer): Buffer {
  const tags: Array<{ signature: string; data: Buffer }> = [];
  for (let i = 0; i < profile.readUInt32BE(128); i++) {
    const at = 132 + i * 12;
    const signature = profile.toString('latin1', at, at + 4);
    const offset = profile.readUInt32BE(at + 4);
    if (KEPT_TAGS.includes(signature)) tags.push({ signature, data: profile.subarray(offset, offset + profile.readUInt32BE(at + 8)) });
  }
  if (tags.length !== KEPT_TAGS.length) throw new Error(`expected tags ${KEPT_TAGS}, found ${tags.map((t) => t.signature)}`);
  const table = Buffer.alloc(4 + 12 * tags.length);
  table.writeUInt32BE(tags.length, 0);
  const body: Buffer[] = [];
  let offset = 128 + table.length;
  tags.forEach(({ signature, data }, i) => {
    table.write(signature, 4 + i * 12, 'latin1');
    table.writeUInt32BE(offset, 8 + i * 12);
    table.writeUInt32BE(data.length, 12 + i * 12);
    const padded = Buffer.concat([data, Buffer.alloc((4 - (data.length % 4)) % 4)]);
    body.push(padded);
    offset += padded.length;
  });
  const header = Buffer.from(profile.subarray(0, 128));
  header.writeUInt32BE(offset, 0);
  header.fill(0, 84, 100); // the profile ID (an MD5 of the whole profile) no longer matches
  return Buffer.concat([header, table, ...body]);
}

const profile = trimmed(await libvipsCmykProfile());
writeFileSync(output, profile);
console.log(`${path.relative(process.cwd(), output)}: ${profile.length} bytes`);
