import { declaredErrorCodes, ErrorBodySchema, SESSION_COOKIE, type RouteContract } from '@host/admin-api';
import { HOST_ERROR_CATALOG, type HostErrorCode } from '@host/host-errors';
import { z } from 'zod';

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return rest;
}

function statusOf(code: HostErrorCode): number {
  return (HOST_ERROR_CATALOG[code] as { status?: number }).status ?? 400;
}

/**
 * The OpenAPI 3.1 document of the admin API, generated from the mounted route
 * table: every route with its parameters, request schema, responses and the
 * error codes it can answer with (grouped by HTTP status).
 */
export function buildOpenApiDocument(
  routes: readonly RouteContract<unknown, unknown>[],
  info: { version: string },
): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const errorBody = jsonSchema(ErrorBodySchema, 'output');
  for (const r of routes) {
    const op: Record<string, unknown> = {
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      ...(r.tags ? { tags: r.tags } : {}),
      operationId: `${r.method}${r.path.replace(/\{([^}]+)\}/g, 'By_$1').replace(/[^A-Za-z0-9]+(.)?/g, (_m, c?: string) => (c ? c.toUpperCase() : ''))}`,
      security: r.auth === false ? [] : [{ adminToken: [] }, { adminSession: [] }],
    };
    const parameters: unknown[] = Object.entries(r.params ?? {}).map(([name, description]) => ({
      name,
      in: 'path',
      required: true,
      description,
      schema: { type: 'string' },
    }));
    if (r.query) {
      const q = jsonSchema(r.query, 'input') as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
      for (const [name, schema] of Object.entries(q.properties ?? {})) {
        const { description, ...s } = schema;
        parameters.push({ name, in: 'query', required: q.required?.includes(name) ?? false, description, schema: s });
      }
    }
    if (parameters.length) op['parameters'] = parameters;
    if (r.body) op['requestBody'] = { required: true, content: { 'application/json': { schema: jsonSchema(r.body, 'input') } } };
    if (r.multipart) {
      const fields = jsonSchema(r.multipart.fields, 'input') as { properties?: Record<string, unknown> };
      op['requestBody'] = {
        required: true,
        content: {
          'multipart/form-data': {
            schema: {
              type: 'object',
              properties: {
                [r.multipart.fileField]: { type: 'string', format: 'binary', description: r.multipart.fileDescription },
                ...fields.properties,
              },
              required: [r.multipart.fileField],
            },
          },
        },
      };
    }
    const responses: Record<string, unknown> = {};
    for (const [status, res] of Object.entries(r.responses)) {
      const contentType = res.contentType ?? 'application/json';
      responses[status] = {
        description: res.description,
        ...(res.schema ? { content: { [contentType]: { schema: jsonSchema(res.schema, 'output') } } } : {}),
      };
    }
    const errors = declaredErrorCodes(r);
    const byStatus = new Map<number, HostErrorCode[]>();
    for (const code of errors) byStatus.set(statusOf(code), [...(byStatus.get(statusOf(code)) ?? []), code]);
    for (const [status, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) {
      responses[String(status)] = {
        description: codes.map((c) => `\`${c}\`: ${HOST_ERROR_CATALOG[c].message}`).join('\n\n'),
        content: { 'application/json': { schema: { ...errorBody, 'x-error-codes': codes } } },
      };
    }
    op['responses'] = responses;
    (paths[`/api${r.path}`] ??= {})[r.method] = op;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Plugin host admin API',
      version: info.version,
      description:
        'Administration of protocol v2 plugins. Every route except GET /api/health, GET /api/ready and POST /api/session requires "Authorization: Bearer <admin token>", or the session cookie of the admin app (POST /api/session) with the X-CSRF-Token header on requests that change something. Errors are {"error": {"code", "message", "details"}}; details is an object, and a request that fails validation lists each problem in details.issues as {code, path, message}.',
    },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: {
        adminToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'The admin token printed on first start (or the one in HOST_ADMIN_TOKEN_FILE).',
        },
        adminSession: {
          type: 'apiKey',
          in: 'cookie',
          name: SESSION_COOKIE,
          description:
            'The admin app session from POST /api/session (HttpOnly, SameSite=Strict). Requests that change something also send the X-CSRF-Token header of the session.',
        },
      },
    },
    paths,
  };
}
