/// <reference types="node" />
/**
 * The committed WebAssembly codecs are the ones codecs/build.sh built: every output (the .wasm,
 * its glue, the licences) and every entry point (our C files and build scripts) of every library
 * in codecs/manifest.json has the SHA-256 recorded when it was built. A hand-edited glue file, a
 * changed entry point without a rebuild, or a stale binary fails here.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const outputs = path.join(root, 'src/image/codecs/wasm');

interface LibraryEntry {
  package: string;
  version: string;
  outputs: Record<string, string>;
  entry_points: Record<string, string>;
}

const manifest = JSON.parse(readFileSync(path.join(root, 'codecs/manifest.json'), 'utf8')) as { emscripten: string; libraries: Record<string, LibraryEntry> };
const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

describe('codecs/manifest.json', () => {
  it('lists at least one library, built with emscripten 3.1.6 from a Debian source package (or from our own C alone)', () => {
    expect(manifest.emscripten).toBe('3.1.6');
    expect(Object.keys(manifest.libraries).length).toBeGreaterThan(0);
    for (const [name, library] of Object.entries(manifest.libraries)) {
      // The pipeline's kernels (codecs/kernels) have no upstream: package and version are "none".
      const ownCode = library.package === 'none' && library.version === 'none';
      const pinned = /^(\d+:)?[\w.~+]+-[\w.~+]+$/.test(library.version);
      expect({ name, package: typeof library.package, version: ownCode || pinned }).toEqual({ name, package: 'string', version: true });
      expect(Object.keys(library.outputs).length, name).toBeGreaterThan(0);
      expect(Object.keys(library.entry_points).length, name).toBeGreaterThan(0);
    }
  });

  it.each(Object.entries(manifest.libraries))('%s: every output and entry point has its recorded SHA-256', (_name, library) => {
    for (const [file, hash] of Object.entries(library.outputs)) expect({ file, hash: sha256(path.join(outputs, file)) }).toEqual({ file, hash });
    for (const [file, hash] of Object.entries(library.entry_points)) expect({ file, hash: sha256(path.join(root, file)) }).toEqual({ file, hash });
  });

  it('lists every module in src/image/codecs/wasm', () => {
    const listed = new Set(Object.values(manifest.libraries).flatMap((library) => Object.keys(library.outputs)));
    const modules = readdirSync(outputs).filter((file) => file.endsWith('.wasm') || (file.endsWith('.js') && !file.endsWith('.d.ts')));
    expect(modules.filter((file) => !listed.has(file))).toEqual([]);
  });
});
