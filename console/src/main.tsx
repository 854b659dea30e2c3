import './styles.css';

import { render } from 'preact';

import { App } from './app.tsx';

const root = document.getElementById('app');
if (!root) {
  throw new Error('index.html has no #app element to render into');
}
render(<App />, root);
