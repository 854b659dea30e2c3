import './styles.css';

import { render } from 'preact';

import { App, type PageName, pages } from './app.tsx';
import { linkBrandingStylesheet } from './branding.ts';
import { phrases } from './phrases.ts';

// The service serves this application at /sign-in, /register, /reset-password, /consent and /callback[/sso]/<connector id>.
const path = window.location.pathname;
const names = Object.keys(pages) as PageName[];
const page = path.startsWith('/callback') ? 'callback' : (names.find((name) => path === `/${name}`) ?? 'sign-in');

linkBrandingStylesheet();
document.title = phrases.titles[page];
const root = document.getElementById('app');
if (!root) {
  throw new Error('index.html has no #app element to render into');
}
render(<App page={page} />, root);
