/**
 * What quality=auto costs on the 12 MP photo, by its parts, in Node against a plain q80 conversion
 * (decode, encode) of the same photo: the pass that collects the sample (a second decode), the
 * trials on it, the whole picture's check (the result decoded, its tiles scored against the
 * sample's; or the whole picture scored, the input decoded once more), and a correction (one more
 * encode and check). Medians of --runs (default 3) runs of each part, with the machine's load.
 *
 *   npx node --experimental-transform-types --import ./bench/node-hooks.ts bench/quality-cost.ts [--formats jpeg,webp,avif] [--runs 3]
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';

const load = (file: string) => import(new URL(file, import.meta.url).href);
const { FORMATS } = await load('../src/image/formats/index.ts');
const { ResultBuffer } = await load('../src/image/result-buffer.ts');
const { scoreRows } = await load('../src/image/quality/score-rows.ts');
const { sampleLayout, collectSample } = await load('../src/image/quality/sample.ts');
const { sampleTrial } = await load('../src/image/quality/sample-trial.ts');
const { pictureRows } = await load('../src/image/stages/rows.ts');
const { Ssimulacra2 } = await load('../src/image/quality/ssimulacra2.ts');
const { Ssimulacra2Kernel } = await load('../src/image/quality/ssimulacra2-kernels.ts');

type Format = 'jpeg' | 'webp' | 'avif';
const argument = (name: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const formats = (argument('formats') ?? 'jpeg,webp,avif').split(',') as Format[];
const RUNS = Number(argument('runs') ?? 3);
const input = new Uint8Array(readFileSync(path.resolve(import.meta.dirname, '../../shared/corpus/photos/photo-12mp.jpg')));
const file = FORMATS.jpeg.read(input);
const decodeInput = () => file.decode({ shrink: 1, region: null });
const { width, height } = file.header;
const layout = sampleLayout(width, height);

async function median(run: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[times.length >> 1];
}

async function encode(format: Format, quality: number): Promise<Uint8Array> {
  const sink = new ResultBuffer(256 * 2 ** 20);
  await FORMATS[format].encoder.encode(await decodeInput(), { quality, orientation: 1 }, sink);
  return sink.bytes();
}

// The metrics alone, per megapixel (the sample's 0.26 MP and the whole photo's 12).
const whole = await collectSample(await decodeInput(), { size: { width, height: 1000 }, tiles: [{ x: 0, y: 0, width, height: 1000 }], columns: 1 });
for (const [name, Metric] of [['TypeScript', Ssimulacra2], ['WebAssembly', Ssimulacra2Kernel]] as const) {
  const ms = await median(async () => {
    const metric = new Metric(width, 1000);
    metric.push(whole.data, whole.data, 1000);
    metric.score();
  });
  console.log(`SSIMULACRA 2 (${name}): ${(ms / ((width * 1000) / 1e6)).toFixed(0)} ms a megapixel (${width}x1000); load ${loadavg()[0].toFixed(2)}`);
}

const mosaic = await collectSample(await decodeInput(), layout);
for (const format of formats) {
  const plain = await median(() => encode(format, 80));
  const sample = await median(async () => collectSample(await decodeInput(), layout));
  const trial = sampleTrial(format, mosaic, { alpha: false }, width * height);
  const trials = await median(async () => {
    for (const quality of [80, 72, 76, 74]) await trial(quality);
  });
  const result = await encode(format, 76);
  const checkTiles = await median(async () => {
    const tiles = await collectSample(await FORMATS[format].read(result).decode({ shrink: 1, region: null }), layout);
    const traits = { model: 'rgba' as const, alpha: false, grey: false };
    await scoreRows(pictureRows(mosaic, traits), pictureRows(tiles, traits));
  });
  const checkWhole = await median(async () => scoreRows(await decodeInput(), await FORMATS[format].read(result).decode({ shrink: 1, region: null })));
  const auto = plain + sample + trials + checkTiles;
  console.log(
    `${format}: q80 ${plain.toFixed(0)} ms; sample pass ${sample.toFixed(0)} ms, 4 trials ${trials.toFixed(0)} ms, tiles check ${checkTiles.toFixed(0)} ms, whole check ${checkWhole.toFixed(0)} ms; ` +
      `auto with the tiles check ${(auto / plain).toFixed(2)}x q80, with a correction ${((auto + plain + checkTiles) / plain).toFixed(2)}x, with the whole check ${((plain + sample + trials + checkWhole) / plain).toFixed(2)}x; load ${loadavg()[0].toFixed(2)}`,
  );
}
