import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { chooseLanguage, currentLanguage, LANGUAGES, type Language } from '../i18n';

/** The language of the app, chosen here and kept in this browser; each language is named in itself. */
export function LanguageSwitch() {
  const { t } = useTranslation();
  const id = useId();
  const lng = currentLanguage();
  return (
    <span className="language">
      <label htmlFor={id}>{t('language.label')}</label>
      <select id={id} value={lng} onChange={(e) => void chooseLanguage(e.target.value as Language)}>
        {(Object.keys(LANGUAGES) as Language[]).map((l) => (
          <option key={l} value={l} lang={LANGUAGES[l].tag}>
            {LANGUAGES[l].name}
          </option>
        ))}
      </select>
    </span>
  );
}
