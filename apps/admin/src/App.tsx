import { lazy, Suspense } from 'react';
import { NavLink, Route, Routes } from 'react-router';
import { HostVersion } from './components/HostVersion';
import { PluginDetailPage } from './pages/PluginDetail';
import { PluginsPage } from './pages/Plugins';
import { SignInPage } from './pages/SignIn';
import { SessionProvider, useSession } from './session';

// The playground brings the Markdown renderer; it loads when opened.
const PlaygroundPage = lazy(() => import('./pages/Playground'));
const QqBotPage = lazy(() => import('./pages/QqBot'));

function Shell() {
  const { state, signOut } = useSession();
  if (state.status === 'loading')
    return (
      <p className="loading" role="status">
        Loading…
      </p>
    );
  if (state.status === 'signedOut') return <SignInPage reason={state.reason} />;
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="top">
        <span className="brand">Plugin host</span>
        <nav aria-label="Main">
          <NavLink to="/" end>
            v2 plugins
          </NavLink>
          <NavLink to="/playground">Playground</NavLink>
          <NavLink to="/qqbot">QQ Bot</NavLink>
        </nav>
        <HostVersion />
        <button type="button" className="secondary" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <Suspense fallback={<p role="status">Loading…</p>}>
          <Routes>
            <Route path="/" element={<PluginsPage />} />
            <Route path="/plugins/:pluginId" element={<PluginDetailPage />} />
            <Route path="/playground" element={<PlaygroundPage />} />
            <Route path="/qqbot" element={<QqBotPage />} />
            <Route path="*" element={<p>No such page. Go to the plugins tab.</p>} />
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
