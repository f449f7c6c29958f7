// Credentials for a Radar started with authentication on. The analyst enters an API key (`radar keys
// create`) or an OIDC access token once per browser tab; it is kept in sessionStorage (this tab
// only, gone when it closes; never in the URL or a cookie) and sent as `Authorization: Bearer …`
// with every request to the service. A 401 (no credential, or one the service no longer accepts:
// revoked, expired) opens the dialog and the request is retried with what was entered. With the
// embedded default (loopback, no keys configured) nothing is refused and the dialog never appears.
const STORE = 'radar.credencial';
const $ = (id) => document.getElementById(id);
let asking = null;

export function credential() {
  try { return sessionStorage.getItem(STORE) || ''; } catch { return ''; }
}

export function forget() {
  try { sessionStorage.removeItem(STORE); } catch { /* storage disabled: nothing kept */ }
  showSignOut();
}

function keep(value) {
  try { sessionStorage.setItem(STORE, value); } catch { /* storage disabled: this page only */ }
  showSignOut();
}

export function showSignOut() {
  const b = $('salir');
  if (b) b.hidden = !credential();
}

// One dialog for every request refused at the same time; resolves with the credential, or null
// when the analyst cancels.
function ask(message) {
  if (asking) return asking;
  asking = new Promise((resolve) => {
    const dialog = $('acceso');
    const form = $('acceso-form');
    const input = $('acceso-clave');
    $('acceso-mensaje').textContent = message;
    input.value = '';
    const done = (value) => {
      form.removeEventListener('submit', onSubmit);
      $('acceso-cancelar').removeEventListener('click', onCancel);
      dialog.removeEventListener('cancel', onCancel);
      if (dialog.open) dialog.close();
      asking = null;
      resolve(value);
    };
    const onSubmit = (e) => {
      e.preventDefault();
      const value = input.value.trim();
      if (value) { keep(value); done(value); }
    };
    const onCancel = (e) => { e.preventDefault(); done(null); };
    form.addEventListener('submit', onSubmit);
    $('acceso-cancelar').addEventListener('click', onCancel);
    dialog.addEventListener('cancel', onCancel);
    dialog.showModal();
    input.focus();
  });
  return asking;
}

// `fetch` with the tab's credential; on 401 asks for one (at most three times) and retries.
export async function apiFetch(url, options = {}) {
  for (let attempt = 0; ; attempt += 1) {
    const headers = new Headers(options.headers || {});
    const sent = credential();
    if (sent) headers.set('Authorization', `Bearer ${sent}`);
    const r = await fetch(url, { ...options, headers });
    if (r.status !== 401 || attempt >= 3) return r;
    const body = await r.clone().json().catch(() => ({}));
    const why = (body.error && body.error.message) || '';
    if (sent && credential() === sent) forget();
    const entered = await ask(sent
      ? `La clave no fue aceptada${why ? ` (${why})` : ''}. Escriba otra clave de acceso.`
      : 'Este Radar exige autenticación. Escriba su clave de acceso (radar keys create) o un token de su proveedor de identidad.');
    if (entered === null) return r;
  }
}
