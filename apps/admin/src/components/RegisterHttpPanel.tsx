import { ADMIN_ROUTES, type PluginResponse, type RegisterHttpPluginResponse } from '@host/admin-api';
import { useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { call } from '../api';
import { ErrorNotice } from './ErrorNotice';
import { CommandList, Facts, PermissionList } from './Facts';

/**
 * Register an HTTP plugin by base URL. The plugin is registered disabled, so
 * the operator sees the fetched manifest and copies the signing secret (shown
 * once) before any event goes to it; then enables it, or removes it again.
 */
export function RegisterHttpPanel() {
  const queryClient = useQueryClient();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [registered, setRegistered] = useState<RegisterHttpPluginResponse>();
  const [enabled, setEnabled] = useState(false);
  const [copied, setCopied] = useState(false);
  const urlId = useId();
  const timeoutId = useId();
  const secretId = useId();

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
      // No clipboard access (an insecure context): the field is selected for Ctrl+C instead.
      (document.getElementById(secretId) as HTMLInputElement | null)?.select();
    }
  }

  const p = registered?.plugin;
  return (
    <section className="panel" aria-labelledby="register-title">
      <h2 id="register-title">Register HTTP plugin</h2>
      <form onSubmit={(e) => void submit(e)} className="inline-form">
        <div>
          <label htmlFor={urlId}>Base URL of the plugin service</label>
          <input id={urlId} name="baseUrl" type="url" required placeholder="https://plugin.example.com" />
        </div>
        <div>
          <label htmlFor={timeoutId}>Timeout per event (ms, optional)</label>
          <input id={timeoutId} name="timeout" type="number" min={100} max={120000} placeholder="10000" />
        </div>
        <button type="submit" disabled={busy}>
          Fetch manifest and register
        </button>
      </form>
      <p className="hint">
        The host fetches {'{baseUrl}'}/host/plugin/manifest, checks it, and registers the plugin disabled until you enable it below. To try
        it, the example echo plugin runs as an HTTP service too: in <code>examples/echo-plugin</code>,{' '}
        <code>HOST_PLUGIN_SECRET=later PORT=8787 npm run start:http</code>, register <code>http://127.0.0.1:8787</code>, then restart it
        with the secret shown here (it has the id com.example.echo, so uninstall the ZIP version first).
      </p>
      {error !== undefined && <ErrorNotice error={error} title="Not registered" />}
      {registered && p && (
        <div className="success" role="status">
          <p>
            Registered <strong>{p.name}</strong> {p.version} ({p.pluginId}) by {p.author}, disabled for now.
          </p>
          <Facts
            rows={[
              ['Base URL', p.baseUrl],
              ['Capabilities', p.capabilityNames.join(', ')],
              ['Description', p.description ?? '—'],
            ]}
          />
          <h3>Permissions</h3>
          <PermissionList permissions={p.manifest.permissions} />
          <h3>Commands</h3>
          <CommandList commands={p.manifest.commands} />
          <div className="secret">
            <label htmlFor={secretId}>Signing secret (shown only now)</label>
            <div className="row">
              <input id={secretId} readOnly value={registered.signingSecret} spellCheck={false} onFocus={(e) => e.target.select()} />
              <button type="button" onClick={() => void copy()}>
                {copied ? 'Copied' : 'Copy'}
              </button>
            </div>
            <p className="hint">
              {registered.notice} The plugin checks each request&apos;s signature with it; store it in the plugin service&apos;s
              configuration (services built with the Node SDK read it from <code>HOST_PLUGIN_SECRET</code>), not in code. If it is lost,
              remove the plugin and register it again for a new one.
            </p>
          </div>
          {!enabled ? (
            <div className="buttons">
              <button type="button" className="secondary" disabled={busy} onClick={() => void discard()}>
                Remove it again
              </button>
              <button type="button" disabled={busy} onClick={() => void enable()}>
                Enable delivery
              </button>
            </div>
          ) : (
            <p>Delivery is enabled: the plugin receives events now.</p>
          )}
        </div>
      )}
    </section>
  );
}
