import { HOST_ERROR_CATALOG } from '@host/host-errors';
import { declaredErrorCodes, matchRoute, routeKey } from './contract';
import { ErrorBodySchema } from './errors';
import { ADMIN_ROUTE_LIST, ADMIN_ROUTES } from './routes';

describe('admin API route contracts', () => {
  it('name each method and path once', () => {
    const keys = ADMIN_ROUTE_LIST.map(routeKey);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('include the console, event and HTTP registration routes', () => {
    expect(ADMIN_ROUTE_LIST.map(routeKey)).toEqual(
      expect.arrayContaining([
        'POST /console/messages',
        'POST /console/chat-events',
        'GET /console/events',
        'GET /events',
        'POST /plugins/http',
        'POST /plugins/{pluginId}/refresh',
      ]),
    );
  });

  it.each(ADMIN_ROUTE_LIST.map((c) => [routeKey(c), c] as const))('%s: declares only catalogue codes', (_key, c) => {
    for (const code of declaredErrorCodes(c)) expect(Object.keys(HOST_ERROR_CATALOG)).toContain(code);
  });

  it.each(ADMIN_ROUTE_LIST.map((c) => [routeKey(c), c] as const))('%s: declares BAD_REQUEST when it validates input', (_key, c) => {
    if (c.body || c.query || c.multipart) expect(c.errors).toContain('BAD_REQUEST');
  });

  it.each(ADMIN_ROUTE_LIST.map((c) => [routeKey(c), c] as const))('%s: documents each path parameter and a success answer', (_key, c) => {
    const inPath = [...c.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
    expect(Object.keys(c.params ?? {}).sort()).toEqual(inPath);
    expect(Object.keys(c.responses).some((s) => Number(s) >= 200 && Number(s) < 300)).toBe(true);
  });

  it('adds the session codes to routes behind the admin token (the CSRF ones to those that change something) and INTERNAL to all', () => {
    expect(declaredErrorCodes(ADMIN_ROUTES.health)).toEqual(['INTERNAL']);
    expect(declaredErrorCodes(ADMIN_ROUTES.listEvents)).toEqual([
      'UNAUTHORIZED',
      'SESSION_EXPIRED',
      'AUTH_THROTTLED',
      'BAD_REQUEST',
      'REQUEST_JSON_TOO_COMPLEX',
      'STORE_UNAVAILABLE',
      'INTERNAL',
    ]);
    expect(declaredErrorCodes(ADMIN_ROUTES.startPlugin)).toEqual(
      expect.arrayContaining(['UNAUTHORIZED', 'SESSION_EXPIRED', 'CSRF_TOKEN_INVALID', 'ORIGIN_REFUSED']),
    );
    expect(declaredErrorCodes(ADMIN_ROUTES.signIn)).not.toContain('UNAUTHORIZED');
  });

  it('finds the route of a request path, literal segments first', () => {
    expect(matchRoute(ADMIN_ROUTE_LIST, 'POST', '/plugins/http')).toBe(ADMIN_ROUTES.registerHttpPlugin);
    expect(matchRoute(ADMIN_ROUTE_LIST, 'POST', '/plugins/com.example.echo/refresh')).toBe(ADMIN_ROUTES.refreshHttpPlugin);
    expect(matchRoute(ADMIN_ROUTE_LIST, 'GET', '/plugins/packages/pending/abc')).toBe(ADMIN_ROUTES.getPendingUpdate);
    expect(matchRoute(ADMIN_ROUTE_LIST, 'GET', '/plugins/com.example.echo')).toBe(ADMIN_ROUTES.getPlugin);
    expect(matchRoute(ADMIN_ROUTE_LIST, 'PATCH', '/plugins')).toBeUndefined();
  });

  it('describes error bodies', () => {
    expect(ErrorBodySchema.safeParse({ error: { code: 'BAD_REQUEST', message: 'no' } }).success).toBe(true);
    expect(ErrorBodySchema.safeParse({ error: { code: 'NO_SUCH_CODE', message: 'no' } }).success).toBe(false);
  });
});
