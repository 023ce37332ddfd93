/**
 * Lets Node 24 import the Worker's source directly (for benchmarks of single codecs outside
 * workerd): extensionless relative imports resolve to .ts files (or a folder's index.ts), and a .wasm import gives a
 * compiled WebAssembly.Module and an .icc import its bytes as an ArrayBuffer, as wrangler's bundler does. Use with
 * `node --experimental-transform-types --import ./bench/node-hooks.ts <script>`.
 */
import { registerHooks } from 'node:module';

registerHooks({
  resolve(specifier, context, next) {
    if (/^\.\.?\//.test(specifier) && !/\.(ts|js|mjs|wasm|json|icc)$/.test(specifier)) {
      for (const candidate of [`${specifier}.ts`, `${specifier}/index.ts`]) {
        try {
          return next(candidate, context);
        } catch {
          // not this file: try the next, then resolve as written
        }
      }
    }
    return next(specifier, context);
  },
  load(url, context, next) {
    if (url.endsWith('.wasm')) {
      const source = `import { readFileSync } from 'node:fs'; export default new WebAssembly.Module(readFileSync(new URL(${JSON.stringify(url)})));`;
      return { format: 'module', source, shortCircuit: true };
    }
    if (url.endsWith('.icc')) {
      const source = `import { readFileSync } from 'node:fs'; const bytes = readFileSync(new URL(${JSON.stringify(url)})); export default bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);`;
      return { format: 'module', source, shortCircuit: true };
    }
    return next(url, context);
  },
});
