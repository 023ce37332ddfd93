/**
 * Lets Node 24 import the Worker's source directly (for benchmarks of single codecs outside
 * workerd): extensionless relative imports resolve to .ts files, and a .wasm import gives a
 * compiled WebAssembly.Module, as wrangler's bundler does. Use with
 * `node --experimental-transform-types --import ./bench/node-hooks.ts <script>`.
 */
import { registerHooks } from 'node:module';

registerHooks({
  resolve(specifier, context, next) {
    if (/^\.\.?\//.test(specifier) && !/\.(ts|js|mjs|wasm|json)$/.test(specifier)) {
      try {
        return next(`${specifier}.ts`, context);
      } catch {
        // not a .ts file: resolve as written
      }
    }
    return next(specifier, context);
  },
  load(url, context, next) {
    if (url.endsWith('.wasm')) {
      const source = `import { readFileSync } from 'node:fs'; export default new WebAssembly.Module(readFileSync(new URL(${JSON.stringify(url)})));`;
      return { format: 'module', source, shortCircuit: true };
    }
    return next(url, context);
  },
});
