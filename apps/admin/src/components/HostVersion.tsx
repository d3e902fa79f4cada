import { ADMIN_ROUTES, type HealthResponse } from '@host/admin-api';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { call } from '../api';

/** "Host 0.1.0 · protocol v2 · SDK 2.0.0" from /api/health; nothing while unknown (it is not worth an error). */
export function HostVersion({ load = () => call<HealthResponse>(ADMIN_ROUTES.health) }: { load?: () => Promise<HealthResponse> }) {
  const { t } = useTranslation();
  const [health, setHealth] = useState<HealthResponse | undefined>();
  useEffect(() => {
    let live = true;
    load().then(
      (h) => live && setHealth(h),
      () => undefined,
    );
    return () => {
      live = false;
    };
    // Loaded once per page: the host's version does not change while it runs.
  }, []);
  if (!health) return null;
  return (
    <span className="host-version" title={t('hostVersion.title', { versions: health.supportedSdkVersions })}>
      {t('hostVersion.text', { version: health.version, protocol: health.protocolVersion, sdk: health.sdkVersion })}
    </span>
  );
}
