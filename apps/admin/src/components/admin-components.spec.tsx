import { act, render } from '@testing-library/react';
import { ApiError } from '../api';
import { chooseLanguage, formatDateTime, i18n, languageFromBrowser, ready } from '../i18n';
import { ErrorNotice } from './ErrorNotice';
import { draftOf, valuesOf, type SettingField } from './SettingsForm';
import { describeState as describeIn } from './StateBadge';

const describeState = (p: Parameters<typeof describeIn>[0], now?: number) => describeIn(p, i18n.t, now);

const switchTo = (lng: 'en' | 'zh') =>
  act(async () => {
    await chooseLanguage(lng);
  });

beforeAll(() => ready);
afterEach(() => switchTo('en'));

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
  const manifestInvalid = () =>
    new ApiError(422, 'INSTALL_MANIFEST_INVALID', 'manifest.json is not valid: <b>version</b> is missing.', {
      issues: [{ code: 'manifest.field.required', path: 'version', message: '<i>required</i>' }],
    });

  it("shows the code, the app's sentence for a code it knows with the host's particulars, and each field problem, all as text", () => {
    const { container, getByRole } = render(<ErrorNotice error={manifestInvalid()} />);
    expect(getByRole('alert').textContent).toContain('INSTALL_MANIFEST_INVALID');
    expect(container.textContent).toContain('manifest.json does not follow protocol v2.');
    expect(container.textContent).toContain('The host said: manifest.json is not valid: <b>version</b> is missing.');
    expect(container.textContent).toContain('<i>required</i>');
    expect(container.querySelector('b, i')).toBeNull();
  });

  it('shows the host message and the fix from the error catalogue for a code the app does not word itself', () => {
    const e = new ApiError(422, 'REGISTRATION_REDIRECT', 'GET http://a/host/plugin/manifest answered 302.');
    const { container } = render(<ErrorNotice error={e} />);
    expect(container.textContent).toContain('GET http://a/host/plugin/manifest answered 302.');
    expect(container.textContent).toContain('What to do: The manifest request was redirected');
  });

  it('in Chinese: the code as it is with the Chinese sentence, the host particulars beside it; else the host text', async () => {
    await switchTo('zh');
    const { container, rerender } = render(<ErrorNotice error={manifestInvalid()} />);
    expect(container.textContent).toContain('INSTALL_MANIFEST_INVALID');
    expect(container.textContent).toContain('manifest.json 不符合 v2 协议。');
    expect(container.textContent).toContain('主机原文： manifest.json is not valid');
    rerender(<ErrorNotice error={new ApiError(422, 'REGISTRATION_REDIRECT', 'answered 302.')} />);
    expect(container.textContent).toContain('REGISTRATION_REDIRECT');
    expect(container.textContent).toContain('answered 302.');
    expect(container.textContent).toContain('处理办法：');
  });
});

describe('language', () => {
  it('follows the browser: zh* is Chinese, anything else English', () => {
    expect(languageFromBrowser(['zh-CN', 'en'])).toBe('zh');
    expect(languageFromBrowser(['zh-Hant-TW'])).toBe('zh');
    expect(languageFromBrowser(['de-DE', 'zh'])).toBe('zh');
    expect(languageFromBrowser(['en-GB', 'zh-CN'])).toBe('en');
    expect(languageFromBrowser(['fr'])).toBe('en');
    expect(languageFromBrowser([])).toBe('en');
  });

  it('keeps the choice in localStorage and sets the language of the document', async () => {
    await switchTo('zh');
    expect(localStorage.getItem('host-admin.language')).toBe('zh');
    expect(document.documentElement.lang).toBe('zh-CN');
    expect(document.title).toBe('插件主机管理');
    await switchTo('en');
    expect(document.documentElement.lang).toBe('en');
  });

  it('writes dates in the chosen language', () => {
    const at = '2026-03-05T14:07:09Z';
    expect(formatDateTime(at, 'zh')).toBe(
      new Intl.DateTimeFormat('zh-CN', { dateStyle: 'medium', timeStyle: 'medium' }).format(new Date(at)),
    );
    expect(formatDateTime(at, 'zh')).toMatch(/2026年3月5日/);
    expect(formatDateTime(at, 'en')).toMatch(/Mar 5, 2026/);
    expect(formatDateTime(undefined)).toBe('—');
  });

  it('describes a state in Chinese', async () => {
    await switchTo('zh');
    expect(describeState({ state: 'stopped', transport: 'http', enabled: false }).label).toBe('已停止');
  });
});
