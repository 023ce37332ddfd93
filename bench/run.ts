/// <reference types="node" />
/**
 * `npm run bench [-- <options>]`: entry point. test/node/dev-server.ts (written for vitest)
 * imports project modules without the `.ts` extension, which Node's own resolver refuses;
 * this resolve hook retries such relative specifiers with `.ts` before the bench is loaded.
 */
import { registerHooks } from 'node:module';

registerHooks({
  resolve(specifier, context, nextResolve) {
    try {
      return nextResolve(specifier, context);
    } catch (error) {
      const relative = specifier.startsWith('./') || specifier.startsWith('../');
      if (relative && !/\.[cm]?[jt]sx?$/.test(specifier) && (error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND') {
        return nextResolve(`${specifier}.ts`, context);
      }
      throw error;
    }
  },
});

const { main } = await import('./main.ts');
process.exitCode = await main(process.argv.slice(2));
