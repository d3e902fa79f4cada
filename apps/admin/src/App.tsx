import { lazy, Suspense } from 'react';
import { useTranslation } from 'react-i18next';
import { NavLink, Route, Routes } from 'react-router';
import { HostVersion } from './components/HostVersion';
import { LanguageSwitch } from './components/LanguageSwitch';
import { PluginDetailPage } from './pages/PluginDetail';
import { PluginsPage } from './pages/Plugins';
import { SignInPage } from './pages/SignIn';
import { SessionProvider, useSession } from './session';

// The playground brings the Markdown renderer; it loads when opened.
const PlaygroundPage = lazy(() => import('./pages/Playground'));
const QqBotPage = lazy(() => import('./pages/QqBot'));
// The first screen after sign-in; its charts load with it.
const DashboardPage = lazy(() => import('./pages/Dashboard'));
const EventsPage = lazy(() => import('./pages/Events'));

function Shell() {
  const { t } = useTranslation();
  const { state, signOut } = useSession();
  if (state.status === 'loading')
    return (
      <p className="loading" role="status">
        {t('common.loading')}
      </p>
    );
  if (state.status === 'signedOut') return <SignInPage reason={state.reason} />;
  return (
    <>
      <a className="skip-link" href="#main">
        {t('app.skipToContent')}
      </a>
      <header className="top">
        <span className="brand">{t('app.brand')}</span>
        <nav aria-label={t('app.mainNav')}>
          <NavLink to="/" end>
            {t('nav.dashboard')}
          </NavLink>
          <NavLink to="/plugins" end>
            {t('nav.plugins')}
          </NavLink>
          <NavLink to="/events">{t('nav.events')}</NavLink>
          <NavLink to="/playground">{t('nav.playground')}</NavLink>
          <NavLink to="/qqbot">{t('nav.qqbot')}</NavLink>
        </nav>
        <HostVersion />
        <LanguageSwitch />
        <button type="button" className="secondary" onClick={() => void signOut()}>
          {t('app.signOut')}
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <Suspense fallback={<p role="status">{t('common.loading')}</p>}>
          <Routes>
            <Route path="/" element={<DashboardPage />} />
            <Route path="/plugins" element={<PluginsPage />} />
            <Route path="/plugins/:pluginId" element={<PluginDetailPage />} />
            <Route path="/events" element={<EventsPage />} />
            <Route path="/playground" element={<PlaygroundPage />} />
            <Route path="/qqbot" element={<QqBotPage />} />
            <Route path="*" element={<p>{t('app.noSuchPage')}</p>} />
          </Routes>
        </Suspense>
      </main>
    </>
  );
}

export function App() {
  return (
    <SessionProvider>
      <Shell />
    </SessionProvider>
  );
}
