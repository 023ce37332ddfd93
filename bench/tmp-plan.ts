import { readFileSync } from 'node:fs';
const { processImage } = await import('file:///work/main/src/image/pipeline.ts');
const { readSettings } = await import('file:///work/main/src/config.ts');
const limits = readSettings({}).pixelLimits.pro;
const input = new Uint8Array(readFileSync(process.argv[2]));
for (const format of process.argv.slice(3)) {
  try {
    const r = await processImage(input, { kind: 'convert', format, quality: 80, keepAspectRatio: true }, limits);
    console.log(format, 'ok', r.width, r.height, (r.peakBytes / 2 ** 20).toFixed(1), (r.plannedPeakBytes / 2 ** 20).toFixed(1));
  } catch (e: any) { console.log(format, e.code, e.message); }
}
