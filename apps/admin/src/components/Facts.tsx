import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';

/** Permissions with the reason each one is asked for. */
export function PermissionList({ permissions }: { permissions: readonly string[] }) {
  const { t } = useTranslation();
  if (permissions.length === 0) return <p className="muted">{t('facts.noPermissions')}</p>;
  return (
    <ul className="permissions">
      {permissions.map((p) => (
        <li key={p}>
          <code>{p}</code>: {t(`permission.${p}`, { defaultValue: t('facts.unknownPermission') })}
        </li>
      ))}
    </ul>
  );
}

export function CommandList({
  commands,
}: {
  commands: readonly { name: string; prefixes: readonly string[]; aliases?: readonly string[]; description?: string }[];
}) {
  const { t } = useTranslation();
  if (commands.length === 0) return <p className="muted">{t('facts.noCommands')}</p>;
  return (
    <ul className="commands">
      {commands.map((c) => (
        <li key={c.name}>
          <code>
            {c.prefixes[0] ?? ''}
            {c.name}
          </code>
          {c.aliases?.length ? <span className="muted"> {t('facts.aliases', { aliases: c.aliases.join(', ') })}</span> : null}
          {c.description ? <span>: {c.description}</span> : null}
        </li>
      ))}
    </ul>
  );
}

/** A definition list of label/value rows. */
export function Facts({ rows }: { rows: [string, ReactNode][] }) {
  return (
    <dl className="facts">
      {rows.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}
