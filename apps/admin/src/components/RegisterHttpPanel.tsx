import { ADMIN_ROUTES, type PluginResponse, type RegisterHttpPluginResponse } from '@host/admin-api';
import { useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { call } from '../api';
import { ErrorNotice } from './ErrorNotice';
import { CommandList, Facts, PermissionList } from './Facts';

/**
 * Register an HTTP plugin by base URL. The plugin is registered disabled, so
 * the operator copies the signing secret (shown once, first and whole, at the
 * top of the panel) and configures the service with it before any event goes
 * to it; then enables it, or removes it again.
 */
export function RegisterHttpPanel() {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [registered, setRegistered] = useState<RegisterHttpPluginResponse>();
  const [enabled, setEnabled] = useState(false);
  const [copied, setCopied] = useState(false);
  const urlId = useId();
  const timeoutId = useId();
  const secretId = useId();
  const secretTitleId = useId();
  const secretLabelId = useId();

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const baseUrl = String(form.get('baseUrl') ?? '').trim();
    const timeout = String(form.get('timeout') ?? '').trim();
    setBusy(true);
    setError(undefined);
    setRegistered(undefined);
    setEnabled(false);
    setCopied(false);
    try {
      const r = await call<RegisterHttpPluginResponse>(ADMIN_ROUTES.registerHttpPlugin, {
        body: { baseUrl, enabled: false, ...(timeout ? { requestTimeoutMilliseconds: Number(timeout) } : {}) },
      });
      setRegistered(r);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
      void queryClient.invalidateQueries({ queryKey: ['plugins'] });
    }
  }

  async function enable() {
    if (!registered) return;
    setBusy(true);
    try {
      await call<PluginResponse>(ADMIN_ROUTES.startPlugin, { params: { pluginId: registered.plugin.pluginId } });
      setEnabled(true);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
      void queryClient.invalidateQueries({ queryKey: ['plugins'] });
    }
  }

  async function discard() {
    if (!registered) return;
    setBusy(true);
    try {
      await call(ADMIN_ROUTES.uninstallPlugin, { params: { pluginId: registered.plugin.pluginId } });
      setRegistered(undefined);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
      void queryClient.invalidateQueries({ queryKey: ['plugins'] });
    }
  }

  async function copy() {
    if (!registered) return;
    try {
      await navigator.clipboard.writeText(registered.signingSecret);
      setCopied(true);
    } catch {
      // No clipboard access (an insecure context): the secret is selected for Ctrl+C instead.
      const node = document.getElementById(secretId);
      if (node) window.getSelection()?.selectAllChildren(node);
    }
  }

  const p = registered?.plugin;
  return (
    <section className="panel" aria-labelledby="register-title">
      <h2 id="register-title">{t('register.title')}</h2>
      {registered && p && (
        <div className="secret-callout" role="status" aria-labelledby={secretTitleId}>
          <h3 id={secretTitleId}>{t('register.secretTitle')}</h3>
          <p>
            <Trans
              i18nKey="register.registered"
              values={{ name: p.name, version: p.version, pluginId: p.pluginId, author: p.author }}
              components={{ strong: <strong /> }}
            />
          </p>
          <p className="secret-value-label" id={secretLabelId}>
            {t('register.secretLabel')}
          </p>
          <div className="secret-row">
            <code className="secret-value" id={secretId} aria-labelledby={secretLabelId} tabIndex={0}>
              {registered.signingSecret}
            </code>
            <button type="button" onClick={() => void copy()}>
              {copied ? t('common.copied') : t('register.copySecret')}
            </button>
          </div>
          <h4>{t('register.nextTitle')}</h4>
          <ol className="next-steps">
            <li>
              <Trans i18nKey="register.next.configure" components={{ code: <code /> }} />
            </li>
            <li>{t('register.next.restart')}</li>
            <li>{enabled ? t('register.next.enabled') : t('register.next.enable')}</li>
          </ol>
          <p className="hint">{t('register.secretLost')}</p>
          {!enabled && (
            <div className="buttons">
              <button type="button" className="secondary" disabled={busy} onClick={() => void discard()}>
                {t('register.discard')}
              </button>
              <button type="button" disabled={busy} onClick={() => void enable()}>
                {t('register.enable')}
              </button>
            </div>
          )}
          <details>
            <summary>{t('register.manifestSummary')}</summary>
            <Facts
              rows={[
                [t('register.fact.baseUrl'), p.baseUrl],
                [t('register.fact.capabilities'), p.capabilityNames.join(', ')],
                [t('register.fact.description'), p.description ?? '—'],
              ]}
            />
            <h4>{t('plugins.permissions')}</h4>
            <PermissionList permissions={p.manifest.permissions} />
            <h4>{t('plugins.commands')}</h4>
            <CommandList commands={p.manifest.commands} />
          </details>
        </div>
      )}
      <form onSubmit={(e) => void submit(e)} className="inline-form">
        <div className="wide">
          <label htmlFor={urlId}>{t('register.baseUrl')}</label>
          <input id={urlId} name="baseUrl" type="url" required placeholder="https://plugin.example.com" />
        </div>
        <div>
          <label htmlFor={timeoutId}>{t('register.timeout')}</label>
          <input id={timeoutId} name="timeout" type="number" min={100} max={120000} placeholder="10000" />
        </div>
        <button type="submit" disabled={busy}>
          {t('register.submit')}
        </button>
      </form>
      <p className="hint">
        <Trans i18nKey="register.hint" components={{ code: <code /> }} />
      </p>
      {error !== undefined && <ErrorNotice error={error} title={t('register.failed')} />}
    </section>
  );
}
