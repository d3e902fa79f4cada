import { render } from '@testing-library/react';
import { ApiError } from '../api';
import { ErrorNotice } from './ErrorNotice';
import { draftOf, valuesOf, type SettingField } from './SettingsForm';
import { describeState } from './StateBadge';

describe('describeState', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it('counts down a pending restart and says why it crashed', () => {
    const d = describeState(
      {
        state: 'restartPending',
        transport: 'stdio-jsonrpc',
        enabled: true,
        runtime: { state: 'restartPending', crashCount: 2, stateReason: 'exited with code 3', nextRestartAt: '2026-01-01T00:00:04.200Z' },
      },
      now,
    );
    expect(d.label).toBe('Restart in 5 s');
    expect(d.text).toContain('exited with code 3');
    expect(d.text).toContain('crash 2');
  });

  it('explains failed, invalid manifest and HTTP health states', () => {
    expect(
      describeState({
        state: 'failed',
        transport: 'stdio-jsonrpc',
        enabled: true,
        runtime: { state: 'failed', crashCount: 5, stateReason: 'crashed 5 times in 60 s' },
      }).text,
    ).toMatch(/crashed 5 times in 60 s.*start it/);
    expect(
      describeState({
        state: 'invalidManifest',
        transport: 'stdio-jsonrpc',
        enabled: false,
        issues: [{ code: 'manifest.field.required', path: 'version', message: 'is required' }],
      }).text,
    ).toContain('version: is required');
    const http = describeState({
      state: 'running',
      transport: 'http',
      enabled: true,
      runtime: { state: 'running', crashCount: 0, health: 'unreachable', lastError: 'ECONNREFUSED' },
    });
    expect(http).toMatchObject({ label: 'HTTP unreachable', tone: 'bad' });
    expect(http.text).toContain('ECONNREFUSED');
  });
});

describe('settings form values', () => {
  const schema: Record<string, SettingField> = {
    name: { type: 'string', label: 'Name' },
    retries: { type: 'number', label: 'Retries' },
    verbose: { type: 'boolean', label: 'Verbose' },
    mode: { type: 'select', label: 'Mode', options: [{ value: 'a' }] },
    key: { type: 'secret', label: 'Key' },
  };
  it('never puts a stored secret in the form, and sends a blank secret (which keeps the stored one)', () => {
    const draft = draftOf(schema, { name: 'x', retries: 2, verbose: true, mode: 'a', key: { set: true } });
    expect(draft).toEqual({ name: 'x', retries: '2', verbose: true, mode: 'a', key: '' });
    expect(valuesOf(schema, draft)).toEqual({ name: 'x', retries: 2, verbose: true, mode: 'a', key: '' });
  });
  it('clears blank optional fields with null', () => {
    expect(valuesOf(schema, { name: '', retries: '', verbose: false, mode: '', key: 'new' })).toEqual({
      name: null,
      retries: null,
      verbose: false,
      mode: null,
      key: 'new',
    });
  });
});

describe('ErrorNotice', () => {
  it('shows the code, the message, the fix from the error catalogue and each field problem, all as text', () => {
    const e = new ApiError(422, 'INSTALL_MANIFEST_INVALID', 'manifest.json is not valid: <b>version</b> is missing.', {
      issues: [{ code: 'manifest.field.required', path: 'version', message: '<i>required</i>' }],
    });
    const { container, getByRole } = render(<ErrorNotice error={e} />);
    expect(getByRole('alert').textContent).toContain('INSTALL_MANIFEST_INVALID');
    expect(container.textContent).toContain('What to do:');
    expect(container.textContent).toContain('<i>required</i>');
    expect(container.querySelector('b, i')).toBeNull();
  });
});
