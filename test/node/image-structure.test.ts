/// <reference types="node" />
/**
 * How src/image is arranged (docs/development.md, "The image folder"): what one format knows stays
 * in its folder of src/image/formats/, and no module imports one that imports it back.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const image = path.join(root, 'src/image');

function sources(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(folder, entry.name);
    if (entry.isDirectory()) return sources(file);
    return /\.tsx?$/.test(entry.name) && !/\.(test|d)\.ts$/.test(entry.name) ? [file] : [];
  });
}

/** The modules of `known` a file imports at run time (type-only imports are erased). */
function valueImports(file: string, known: Set<string>): string[] {
  const text = readFileSync(file, 'utf8');
  const imports: string[] = [];
  for (const [, clause, specifier] of text.matchAll(/^import (?!type )([^'";]*?) from '(\.[^']+)';/gms)) {
    const names = /^\{([^}]*)\}$/.exec(clause.trim());
    if (names && names[1].split(',').every((name) => /^\s*(type\s|$)/.test(name))) continue; // only `type` names
    const target = path.resolve(path.dirname(file), specifier);
    const found = [target, `${target}.ts`, path.join(target, 'index.ts')].find((candidate) => known.has(candidate));
    if (found) imports.push(found);
  }
  return imports;
}

describe('src/image', () => {
  const files = sources(image);

  it('has no circular imports', () => {
    const known = new Set(files);
    const graph = new Map(files.map((file) => [file, valueImports(file, known)]));
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, trail: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        cycles.push([...trail.slice(trail.indexOf(file)), file].map((f) => path.relative(image, f)).join(' -> '));
        return;
      }
      state.set(file, 'open');
      for (const next of graph.get(file) ?? []) visit(next, [...trail, file]);
      state.set(file, 'done');
    };
    for (const file of files) visit(file, []);
    expect(cycles).toEqual([]);
  });

  it('switches on a format only inside src/image/formats/', () => {
    const formatSwitch = /(===|!==)\s*'(jpeg|png|webp|avif)'|case\s+'(jpeg|png|webp|avif)'/;
    const outside = sources(path.join(root, 'src'))
      .filter((file) => !file.startsWith(path.join(image, 'formats') + path.sep))
      .flatMap((file) => readFileSync(file, 'utf8').split('\n').map((line, i) => [file, i + 1, line] as const))
      .filter(([, , line]) => formatSwitch.test(line))
      .map(([file, line, text]) => `${path.relative(root, file)}:${line}: ${text.trim()}`);
    expect(outside).toEqual([]);
  });
});
