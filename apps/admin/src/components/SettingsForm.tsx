import { ADMIN_ROUTES, type SettingsPutResponse, type SettingsResponse } from '@host/admin-api';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { ApiError, call } from '../api';
import { ErrorNotice } from './ErrorNotice';

/** One field of settings.configSchema (docs/protocol/v2.md 2.2). */
export interface SettingField {
  type: 'string' | 'number' | 'boolean' | 'select' | 'path' | 'secret';
  label: string;
  description?: string;
  required?: boolean;
  defaultValue?: string | number | boolean;
  options?: { value: string; label?: string }[];
  min?: number;
  max?: number;
}

type Draft = Record<string, string | boolean>;

/** Form values (strings for inputs) from the stored values; secrets always start blank. */
export function draftOf(schema: Record<string, SettingField>, values: SettingsResponse['values']): Draft {
  const d: Draft = {};
  for (const [key, f] of Object.entries(schema)) {
    const v = values[key];
    if (f.type === 'secret') d[key] = '';
    else if (f.type === 'boolean') d[key] = v === true;
    else d[key] = v === null || v === undefined || typeof v === 'object' ? '' : String(v);
  }
  return d;
}

/** The PUT body: numbers as numbers, blank optional fields cleared, a blank secret sent blank (keeps the stored one). */
export function valuesOf(schema: Record<string, SettingField>, draft: Draft): Record<string, string | number | boolean | null> {
  const out: Record<string, string | number | boolean | null> = {};
  for (const [key, f] of Object.entries(schema)) {
    const v = draft[key];
    if (f.type === 'boolean') out[key] = v === true;
    else if (f.type === 'secret') out[key] = typeof v === 'string' ? v : '';
    else if (v === '' || v === undefined) out[key] = null;
    else if (f.type === 'number') out[key] = Number(v);
    else out[key] = String(v);
  }
  return out;
}

function Field({
  name,
  field,
  value,
  stored,
  problem,
  onChange,
}: {
  name: string;
  field: SettingField;
  value: string | boolean;
  stored: unknown;
  problem?: string;
  onChange: (v: string | boolean) => void;
}) {
  const { t } = useTranslation();
  const id = useId();
  const hintId = `${id}-hint`;
  const errId = `${id}-err`;
  const hasHint = Boolean(field.description) || field.type === 'secret' || field.type === 'path';
  const describedBy = [hasHint ? hintId : '', problem ? errId : ''].filter(Boolean).join(' ') || undefined;
  const common = { id, name, 'aria-describedby': describedBy, 'aria-invalid': problem ? true : undefined };
  let input;
  if (field.type === 'boolean')
    input = <input {...common} type="checkbox" checked={value === true} onChange={(e) => onChange(e.target.checked)} />;
  else if (field.type === 'select')
    input = (
      <select {...common} value={String(value)} onChange={(e) => onChange(e.target.value)} required={field.required}>
        {!field.required && (
          <option value="">
            {field.defaultValue !== undefined
              ? t('settings.defaultOption', { value: String(field.defaultValue) })
              : t('settings.noDefaultOption')}
          </option>
        )}
        {field.options?.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label ?? o.value}
          </option>
        ))}
      </select>
    );
  else
    input = (
      <input
        {...common}
        type={field.type === 'number' ? 'number' : field.type === 'secret' ? 'password' : 'text'}
        value={String(value)}
        min={field.type === 'number' ? field.min : undefined}
        max={field.type === 'number' ? field.max : undefined}
        step={field.type === 'number' ? 'any' : undefined}
        minLength={field.type === 'string' ? field.min : undefined}
        maxLength={field.type === 'string' ? field.max : undefined}
        autoComplete={field.type === 'secret' ? 'new-password' : 'off'}
        spellCheck={false}
        placeholder={
          field.type === 'secret'
            ? (stored as { set?: boolean } | undefined)?.set
              ? t('settings.secretStored')
              : t('settings.noSecret')
            : field.defaultValue !== undefined
              ? t('settings.defaultPlaceholder', { value: String(field.defaultValue) })
              : undefined
        }
        onChange={(e) => onChange(e.target.value)}
      />
    );
  return (
    <div className={`field field-${field.type}`}>
      <label htmlFor={id}>
        {field.label}
        {field.required && <span aria-hidden="true"> *</span>}
        {field.required && <span className="sr-only"> {t('settings.required')}</span>}
      </label>
      {input}
      {hasHint && (
        <p id={hintId} className="hint">
          {field.description}
          {field.type === 'secret' && ` ${t('settings.secretHint')}`}
          {field.type === 'path' && ` ${t('settings.pathHint')}`}
        </p>
      )}
      {problem && (
        <p id={errId} className="field-error">
          {problem}
        </p>
      )}
    </div>
  );
}

/** The settings form generated from the manifest's settings.configSchema; the host validates and answers per field. */
export function SettingsForm({ pluginId }: { pluginId: string }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const q = useQuery({
    queryKey: ['plugin', pluginId, 'settings'],
    queryFn: () => call<SettingsResponse>(ADMIN_ROUTES.getSettings, { params: { pluginId } }),
  });
  const schema = (q.data?.schema ?? {}) as Record<string, SettingField>;
  const [draft, setDraft] = useState<Draft>({});
  useEffect(() => {
    if (q.data) setDraft(draftOf(q.data.schema as Record<string, SettingField>, q.data.values));
  }, [q.data]);
  const save = useMutation({
    mutationFn: () =>
      call<SettingsPutResponse>(ADMIN_ROUTES.putSettings, { params: { pluginId }, body: { values: valuesOf(schema, draft) } }),
    onSuccess: (r) => queryClient.setQueryData(['plugin', pluginId, 'settings'], { schema: r.schema, values: r.values }),
  });
  const problems = new Map<string, string>();
  if (save.error instanceof ApiError) for (const i of save.error.issues) problems.set(i.path.replace(/^values\./, ''), i.message);

  if (q.isPending) return <p role="status">{t('settings.loading')}</p>;
  if (q.error) return <ErrorNotice error={q.error} />;
  // The manifest's order: the author's, as the host keeps it.
  const keys = Object.keys(schema);
  if (keys.length === 0) return <p className="muted">{t('settings.none')}</p>;
  const refusal = save.error instanceof ApiError && save.error.code === 'SETTINGS_REFUSED' ? save.error : undefined;
  function submit(e: FormEvent) {
    e.preventDefault();
    save.mutate();
  }
  return (
    <form className="settings" onSubmit={submit} noValidate>
      {keys.map((k) => (
        <Field
          key={k}
          name={k}
          field={schema[k]!}
          value={draft[k] ?? ''}
          stored={q.data?.values[k]}
          problem={problems.get(k)}
          onChange={(v) => setDraft((d) => ({ ...d, [k]: v }))}
        />
      ))}
      <div className="buttons">
        <button type="submit" disabled={save.isPending}>
          {t('settings.save')}
        </button>
      </div>
      {refusal ? (
        <div className="error" role="alert">
          <p className="error-title">
            <strong>{t('settings.refusedTitle')}</strong> <code>{refusal.code}</code>
          </p>
          <p>{t('settings.refusedText', { pluginId })}</p>
          <blockquote className="plugin-words">{String(refusal.details['reason'] ?? '')}</blockquote>
        </div>
      ) : (
        save.error && <ErrorNotice error={save.error} title={t('settings.notSaved')} />
      )}
      {save.isSuccess && (
        <p role="status" className="success">
          {t('settings.saved')} {t(`settings.delivery.${save.data.delivery.status}`, { pluginId })}
        </p>
      )}
    </form>
  );
}
