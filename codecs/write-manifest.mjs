// Writes codecs/manifest.json from what codecs/build.sh recorded: for each library rebuilt, its
// Debian source package, version and tarball hashes, the flags, and the SHA-256 of its entry points
// and outputs. Libraries not rebuilt this time keep their entries. test/node/codec-manifest.test.ts
// checks the committed outputs and entry points against it.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const [recordDir, outputDir, manifestPath] = process.argv.slice(2);
const root = path.resolve(path.dirname(manifestPath), '..');
const sha256 = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');

const manifest = existsSync(manifestPath) ? JSON.parse(readFileSync(manifestPath, 'utf8')) : { libraries: {} };
manifest.emscripten = '3.1.6';
for (const name of readdirSync(recordDir).sort()) {
  const entry = { outputs: {}, entry_points: {} };
  for (const line of readFileSync(path.join(recordDir, name), 'utf8').split('\n').filter(Boolean)) {
    const [key, value] = line.split('\t');
    if (key === 'output') entry.outputs[value] = sha256(path.join(outputDir, value));
    else if (key === 'entry') entry.entry_points[value] = sha256(path.join(root, value));
    else entry[key] = value;
  }
  manifest.libraries[name] = entry;
}
manifest.libraries = Object.fromEntries(Object.entries(manifest.libraries).sort(([a], [b]) => a.localeCompare(b)));
writeFileSync(manifestPath, JSON.stringify(manifest, null, 2) + '\n');
console.log(`wrote ${path.relative(root, manifestPath)}`);
