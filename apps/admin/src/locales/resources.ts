// Both languages at once, for the tests that compare them; the app loads the one it shows (../i18n.ts).
export { default as CHINESE } from './chinese';
export { default as ENGLISH } from './english';
