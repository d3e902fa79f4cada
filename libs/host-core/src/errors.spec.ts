import { HostError, invalidRequest, toErrorDetails } from './errors';

const issue = { code: 'console.field.invalid', path: 'waitMs', message: '"waitMs" must be at most 30000.' } as const;

describe('HostError', () => {
  it('takes its status and default message from the catalogue', () => {
    const e = new HostError('PLUGIN_NOT_FOUND');
    expect([e.status, e.message]).toEqual([404, 'No plugin with this pluginId. List plugins with GET /api/plugins.']);
    expect(e.toJSON()).toEqual({ code: 'PLUGIN_NOT_FOUND', message: e.message });
  });

  it('gives every invalid request one shape: BAD_REQUEST with details.issues', () => {
    expect(invalidRequest('console message', [issue]).toJSON()).toEqual({
      code: 'BAD_REQUEST',
      message: `The console message is not valid: ${issue.message}`,
      details: { issues: [issue] },
    });
  });
});

describe('toErrorDetails', () => {
  it('keeps an object, and turns a bare array into {issues}', () => {
    expect(toErrorDetails({ limit: 3 })).toEqual({ limit: 3 });
    expect(toErrorDetails([issue])).toEqual({ issues: [issue] });
    expect(toErrorDetails('text')).toEqual({ value: 'text' });
    expect(toErrorDetails(undefined)).toBeUndefined();
    expect(toErrorDetails(null)).toBeUndefined();
  });
});
