import { HostError, invalidRequest } from '@host/host-core';
import { errorHandler } from '@host/host-routes';
import type { Request, Response } from 'express';
import { z } from 'zod';
import { buildOpenApiDocument, ErrorBodySchema } from './index';

/** The JSON body and status errorHandler answers for `err`. */
function answer(err: unknown): { status: number; body: unknown } {
  const out = { status: 0, body: undefined as unknown };
  const res = {
    headersSent: false,
    setHeader: () => res,
    status: (s: number) => ((out.status = s), res),
    json: (b: unknown) => ((out.body = b), res),
  };
  errorHandler({ maxUploadBytes: 1024 })(err, {} as Request, res as unknown as Response, () => undefined);
  return out;
}

const issue = { code: 'request.field.required', path: 'baseUrl', message: '"baseUrl" is required: add it (a string).' } as const;

describe('error bodies', () => {
  it('put validation issues in details.issues', () => {
    const { status, body } = answer(invalidRequest('registration request', [issue]));
    expect(status).toBe(400);
    expect(body).toEqual({ error: { code: 'BAD_REQUEST', message: expect.stringContaining('not valid'), details: { issues: [issue] } } });
    expect(ErrorBodySchema.safeParse(body).success).toBe(true);
  });

  it('give details as an object also for a HostError-shaped error of another library copy with a bare array', () => {
    const foreign = Object.assign(new Error('The settings are not valid.'), { code: 'SETTINGS_INVALID', details: [issue] });
    const { status, body } = answer(foreign);
    expect(status).toBe(422);
    expect(body).toEqual({ error: { code: 'SETTINGS_INVALID', message: 'The settings are not valid.', details: { issues: [issue] } } });
    expect(ErrorBodySchema.safeParse(body).success).toBe(true);
  });

  it('are described by a schema that refuses details as an array or issues with uncatalogued codes', () => {
    const body = (details: unknown) => ({ error: { code: 'BAD_REQUEST', message: 'The request body is not valid.', details } });
    expect(ErrorBodySchema.safeParse(body({ issues: [issue], limit: 3 })).success).toBe(true);
    expect(ErrorBodySchema.safeParse(body([issue])).success).toBe(false);
    expect(ErrorBodySchema.safeParse(body({ issues: [{ ...issue, code: 'request.baseUrl.missing' }] })).success).toBe(false);
    expect(new HostError('INTERNAL').toJSON()).not.toHaveProperty('details');
  });

  it('are described in the OpenAPI document with details.issues', () => {
    const info = buildOpenApiDocument([], { version: '0.0.0' })['info'] as { description: string };
    expect(info.description).toContain('details.issues as {code, path, message}');
    const schema = z.toJSONSchema(ErrorBodySchema, { io: 'output' }) as unknown as {
      properties: { error: { properties: { details: { type: string; properties: Record<string, unknown> } } } };
    };
    const details = schema.properties.error.properties.details;
    expect(details.type).toBe('object');
    expect(details.properties).toHaveProperty('issues');
  });
});
