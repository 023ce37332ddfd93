/// <reference types="node" />
/**
 * Every file in regressions/ (inputs that once broke a parser, and hand-made nasty inputs) through
 * every parser of the fuzz table, with the same allowed outcomes, invariants and time limit.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FuzzInput } from './arbitraries';
import { newStats, runCase } from './harness';
import { TARGETS } from './targets';

// src/image/stages/colour/index.ts imports its default CMYK profile as a wrangler Data module (an
// ArrayBuffer), which Node's vite cannot load: the same bytes, read from disk.
const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'regressions');
const FILES = readdirSync(DIR)
  .filter((name) => name.endsWith('.bin'))
  .sort();

describe('fuzz regressions: every saved input through every parser', () => {
  it('has regression files', () => {
    expect(FILES.length).toBeGreaterThan(0);
  });

  it.each(FILES)('%s', async (name) => {
    const bytes = new Uint8Array(readFileSync(path.join(DIR, name)));
    const failures: string[] = [];
    for (const target of TARGETS) {
      try {
        await runCase(target, new FuzzInput(bytes, `regressions/${name}`), newStats());
      } catch (error) {
        const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
        failures.push(`${error instanceof Error ? error.message : String(error)}\n${cause instanceof Error ? cause.stack : ''}`);
      }
    }
    expect(failures, failures.join('\n\n')).toEqual([]);
  });
});
