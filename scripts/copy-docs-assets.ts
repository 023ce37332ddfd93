/// <reference types="node" />
/**
 * Copies Swagger UI's browser files from node_modules/swagger-ui-dist into public/docs/assets,
 * so /docs is served by this Worker's static assets and never loads a CDN. Runs after
 * `npm install` (package.json "postinstall"); the copies are not committed.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const FILES = ['swagger-ui-bundle.js', 'swagger-ui.css', 'LICENSE', 'NOTICE'];

const root = path.resolve(import.meta.dirname, '..');
const source = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const target = path.join(root, 'public', 'docs', 'assets');
mkdirSync(target, { recursive: true });
for (const file of FILES) copyFileSync(path.join(source, file), path.join(target, file));
console.log(`copy-docs-assets: Swagger UI ${FILES.length} files -> ${path.relative(root, target)}`);
