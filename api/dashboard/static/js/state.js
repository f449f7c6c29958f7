// The dashboard's state lives in the URL: phenomenon (the page), view, layer, period, entity,
// territory and the views' options. Every change is a history entry, so a view can be shared
// and the back button works.
const FENOMENOS = ['territorial', 'ai_military', 'space_security'];
const VISTAS = ['mapa', 'tiempo', 'red', 'matriz', 'cuadrante'];
const CAPAS = ['lugares', 'alertas', 'presencia'];
// an entity of the dictionary, or a country as the entity (the agent's visualizer puts countries there)
const ENTITY = /^(?:[a-z0-9_]{1,80}|country:[A-Z]{3})$/;
const PLACE = /^(country|department|municipality):[A-Za-z0-9]{2,5}$/;
const GROUPS = ['cdf', 'emc', 'embf', 'seg_marq', 'eln', 'lobos', 'choneros', 'cv', 'pcc', 'others'];

export const KEYS = ['fenomeno', 'vista', 'capa', 'nivel', 'grupo', 'gran', 'cols', 'desde', 'hasta', 'entidad', 'lugar'];

function year(v) {
  const n = Number(v);
  return Number.isInteger(n) && n >= 1900 && n <= 2100 ? n : null;
}

export function readState(search = window.location.search) {
  const q = new URLSearchParams(search);
  const pick = (k, allowed) => (allowed.includes(q.get(k)) ? q.get(k) : null);
  const s = {
    fenomeno: pick('fenomeno', FENOMENOS) || 'territorial',
    vista: pick('vista', VISTAS) || 'mapa',
    capa: pick('capa', CAPAS) || 'lugares',
    nivel: pick('nivel', ['country', 'department', 'municipality']),
    grupo: pick('grupo', GROUPS),
    gran: pick('gran', ['year', 'month']) || 'year',
    cols: pick('cols', ['source', 'phenomenon']) || 'source',
    desde: year(q.get('desde')),
    hasta: year(q.get('hasta')),
    entidad: ENTITY.test(q.get('entidad') || '') ? q.get('entidad') : null,
    lugar: PLACE.test(q.get('lugar') || '') ? q.get('lugar') : null,
  };
  // the alerts and armed-presence layers exist only on the territorial page: a map asking for one
  // (a link, or the agent with no phenomenon) opens that page rather than another layer
  if (s.capa !== 'lugares') {
    if (s.vista === 'mapa') s.fenomeno = 'territorial';
    else if (s.fenomeno !== 'territorial') s.capa = 'lugares';
  }
  // a period may be open on either side ("desde 2019": desde 2019, no hasta)
  if (s.desde && s.hasta && s.desde > s.hasta) [s.desde, s.hasta] = [s.hasta, s.desde];
  return s;
}

export function toSearch(s) {
  const q = new URLSearchParams();
  q.set('fenomeno', s.fenomeno);
  q.set('vista', s.vista);
  const defaults = { capa: 'lugares', gran: 'year', cols: 'source' };
  for (const k of KEYS) {
    if (k === 'fenomeno' || k === 'vista') continue;
    const v = s[k];
    if (v === null || v === undefined || v === '' || defaults[k] === v) continue;
    q.set(k, String(v));
  }
  return `?${q.toString().replace(/%3A/gi, ':')}`;
}

// Filters for the API (the dashboard endpoints' parameter names).
export function apiFilters(s) {
  const q = new URLSearchParams();
  q.set('fenomeno', s.fenomeno);
  if (s.desde) q.set('desde', s.desde);
  if (s.hasta) q.set('hasta', s.hasta);
  if (s.entidad) q.set('entidad', s.entidad);
  if (s.lugar) q.set('lugar', s.lugar);
  return q;
}

export function sameState(a, b) {
  return KEYS.every((k) => (a[k] ?? null) === (b[k] ?? null));
}
