import i18next, { type TFunction } from 'i18next';
import { initReactI18next } from 'react-i18next';

/** The app's languages: the tag of each (for <html lang> and Intl) and its name in itself, for the switcher. */
export const LANGUAGES = { en: { tag: 'en', name: 'English' }, zh: { tag: 'zh-CN', name: '简体中文' } } as const;
export type Language = keyof typeof LANGUAGES;

/** Where the operator's choice is kept, so the next visit opens in it. */
export const LANGUAGE_STORAGE_KEY = 'host-admin.language';

function isLanguage(v: unknown): v is Language {
  return v === 'en' || v === 'zh';
}

/**
 * The browser's preference when the operator chose none: the first of
 * navigator.languages that is Chinese or English decides; anything else gets English.
 */
export function languageFromBrowser(languages: readonly string[]): Language {
  for (const l of languages) {
    const tag = l.toLowerCase();
    if (tag === 'zh' || tag.startsWith('zh-')) return 'zh';
    if (tag === 'en' || tag.startsWith('en-')) return 'en';
  }
  return 'en';
}

function storedLanguage(): Language | undefined {
  try {
    const v = globalThis.localStorage?.getItem(LANGUAGE_STORAGE_KEY);
    return isLanguage(v) ? v : undefined;
  } catch {
    // Storage may be blocked (a privacy setting): the browser's preference applies.
    return undefined;
  }
}

/** The language to open in: the operator's stored choice, else the browser's. */
export function initialLanguage(): Language {
  const nav = globalThis.navigator;
  return storedLanguage() ?? languageFromBrowser(nav?.languages?.length ? nav.languages : nav?.language ? [nav.language] : []);
}

function applyToDocument(lng: Language): void {
  if (typeof document === 'undefined') return;
  document.documentElement.lang = LANGUAGES[lng].tag;
  document.title = i18n.t('app.documentTitle');
}

/**
 * Each language's texts load on demand, so the first load carries only the
 * language shown: the other one comes when the operator switches to it.
 */
const LOADERS: Record<Language, () => Promise<{ default: { [key: string]: unknown } }>> = {
  en: () => import('./locales/english'),
  zh: () => import('./locales/chinese'),
};

export const i18n = i18next.createInstance();
void i18n.use(initReactI18next).init({
  resources: {},
  partialBundledLanguages: true,
  lng: initialLanguage(),
  fallbackLng: false,
  supportedLngs: ['en', 'zh'],
  // React escapes text itself; a second escape would show &lt; in plugin names.
  interpolation: { escapeValue: false },
  returnNull: false,
  initAsync: false,
});
i18n.on('languageChanged', (lng) => applyToDocument(isLanguage(lng) ? lng : 'en'));

async function load(lng: Language): Promise<void> {
  if (i18n.hasResourceBundle(lng, 'translation')) return;
  i18n.addResourceBundle(lng, 'translation', (await LOADERS[lng]()).default);
}

/** Resolves once the texts of the language to open in are loaded: the app renders then. */
export const ready: Promise<void> = (async () => {
  const lng = currentLanguage();
  await load(lng);
  await i18n.changeLanguage(lng);
})();

/** The language the app shows now. */
export function currentLanguage(): Language {
  return isLanguage(i18n.language) ? i18n.language : 'en';
}

/** Switches the app's language (loading its texts first) and remembers the choice in this browser. */
export async function chooseLanguage(lng: Language): Promise<void> {
  try {
    globalThis.localStorage?.setItem(LANGUAGE_STORAGE_KEY, lng);
  } catch {
    // Not remembered (storage blocked); the switch still applies to this page.
  }
  await load(lng);
  await i18n.changeLanguage(lng);
}

/** A date and time in the app's language, in the browser's time zone; "—" when there is none. */
export function formatDateTime(at: string | undefined | null, lng: Language = currentLanguage()): string {
  if (!at) return '—';
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return at;
  return new Intl.DateTimeFormat(LANGUAGES[lng].tag, { dateStyle: 'medium', timeStyle: 'medium' }).format(d);
}

/** A log line's time of day with milliseconds, in the app's language. */
export function formatTimeOfDay(at: string, lng: Language = currentLanguage()): string {
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return at;
  return new Intl.DateTimeFormat(LANGUAGES[lng].tag, {
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    fractionalSecondDigits: 3,
    hourCycle: 'h23',
  }).format(d);
}

export type { TFunction };
