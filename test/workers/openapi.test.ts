import { describe, expect, it } from 'vitest';
import { api } from './helpers';

describe('GET /api/v1/openapi.json', () => {
  it('is an OpenAPI 3.1 document generated from the validation schemas', async () => {
    const response = await api('/api/v1/openapi.json');
    expect(response.status).toBe(200);
    const doc = (await response.json()) as any;
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual(
      ['/api/v1/convert', '/api/v1/crop', '/api/v1/me', '/api/v1/remove-metadata', '/api/v1/resize', '/download/{uuid}/{format}/{filename}'].sort(),
    );
    const convert = doc.paths['/api/v1/convert'].post;
    const form = convert.requestBody.content['multipart/form-data'].schema;
    const schema = form.$ref ? doc.components.schemas[form.$ref.split('/').pop()] : form;
    expect(schema.required).toEqual(expect.arrayContaining(['file', 'format']));
    expect(schema.properties.file).toMatchObject({ type: 'string', format: 'binary' });
    expect(schema.properties.quality).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 });
    expect(schema.properties.format.enum).toEqual(['webp', 'avif', 'jpg', 'png']);
    expect(convert.security).toEqual([{ ApiKey: [] }]);
    expect(doc.components.securitySchemes.ApiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(Object.keys(convert.responses)).toEqual(expect.arrayContaining(['200', '401', '422', '429', '500']));
  });
});
