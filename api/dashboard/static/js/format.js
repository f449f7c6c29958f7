// Spanish labels and es-CO number formatting shared by every view.
export const LOCALE = 'es-CO';
const nf = new Intl.NumberFormat(LOCALE);
const pf = new Intl.NumberFormat(LOCALE, { style: 'percent', maximumFractionDigits: 0 });
const df = new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 2 });
export const num = (n) => (n === null || n === undefined || Number.isNaN(n) ? '—' : nf.format(n));
export const pct = (x) => (x === null || x === undefined ? '—' : pf.format(x));
export const dec = (x) => (x === null || x === undefined ? '—' : df.format(x));
export const plural = (n, one, many) => `${num(n)} ${n === 1 ? one : many}`;

export const FONT = '"DejaVu Sans", "Liberation Sans", Arial, sans-serif';
export const INK = '#1b1f24';
export const MUTED = '#4a5360';
export const FOCUS = '#c2410c';

export const FENOMENOS = {
  territorial: 'Dinámicas territoriales',
  ai_military: 'IA militar',
  space_security: 'Seguridad espacial',
};
export const FENOMENO_CORTO = { territorial: 'territorial', ai_military: 'IA militar', space_security: 'espacial', none: 'sin fenómeno' };
export const CATEGORIAS = { armed_group: 'Grupo armado', actor: 'Actor', program: 'Programa', technology: 'Tecnología', unknown: 'Sin categoría' };
export const CATEGORY_COLORS = { armed_group: '#b2182b', actor: '#1f5fa8', program: '#2e7d32', technology: '#6a3d9a', unknown: '#5b6573' };
export const ALERTAS = { imminent: 'Riesgo inminente', structural: 'Riesgo estructural', unspecified: 'Tipo no indicado', conflicting: 'Tipos en conflicto' };
export const ESTADOS = { present: 'Presencia declarada', absent: 'Sin presencia declarada', no_info: 'Sin información' };
export const GRUPOS = {
  cdf: 'Comandos de la Frontera', emc: 'Estado Mayor Central (EMC)', embf: 'Estado Mayor de Bloques y Frentes',
  seg_marq: 'Segunda Marquetalia', eln: 'ELN', lobos: 'Los Lobos', choneros: 'Los Choneros', cv: 'Comando Vermelho',
  pcc: 'Primer Comando de la Capital', others: 'Otros grupos',
};
export const VISTAS = { mapa: 'Mapa', tiempo: 'Línea de tiempo', red: 'Red de coocurrencia', matriz: 'Matriz de calor', cuadrante: 'Cuadrante' };
export const CAPAS = { lugares: 'Documentos que nombran', alertas: 'Alertas de la Defensoría', presencia: 'Presencia de grupos armados' };

const MESES = ['ene', 'feb', 'mar', 'abr', 'may', 'jun', 'jul', 'ago', 'sep', 'oct', 'nov', 'dic'];
export function periodLabel(period) {
  if (!period) return 'sin fecha';
  const [y, m] = period.split('-');
  return m ? `${MESES[Number(m) - 1]} ${y}` : y;
}

// Labels that depend on the materialized reference data (set once from /tablero/api/meta).
export const labels = { entities: {}, places: {}, iso2: {} };
let regionNames = null;
try { regionNames = new Intl.DisplayNames(['es'], { type: 'region' }); } catch { regionNames = null; }

export function setMeta(meta) {
  for (const e of meta.entities || []) labels.entities[e.id] = e;
  for (const p of meta.places || []) {
    labels.places[p.place_id] = p;
    if (p.level === 'country' && p.iso2) labels.iso2[p.code] = p.iso2;
  }
}

export function countryName(iso3, fallback) {
  const iso2 = labels.iso2[iso3];
  if (iso2 && regionNames) {
    try { const n = regionNames.of(iso2); if (n && n !== iso2) return n; } catch { /* unknown code */ }
  }
  return fallback || (labels.places[`country:${iso3}`] || {}).name || iso3;
}

// Names of places the reference data does not list (a municipality nothing names), from /tablero/api/resolver.
export function addPlaceNames(nombres) {
  for (const [id, p] of Object.entries(nombres || {})) {
    if (!labels.places[id]) labels.places[id] = { place_id: id, ...p };
  }
}

export function placeName(placeId) {
  if (!placeId) return '';
  const [level, code] = placeId.split(':');
  if (level === 'country') return countryName(code);
  const p = labels.places[placeId];
  if (!p) return level === 'municipality' ? `municipio ${code}` : placeId;
  return level === 'municipality' && p.department_name ? `${p.name} (${p.department_name})` : p.name;
}

export function entityName(id) {
  if ((id || '').startsWith('country:')) return countryName(id.slice(8));
  const e = labels.entities[id];
  return e ? e.name : (id || '').replace(/_/g, ' ');
}

// A period, closed or open on either side: "2018–2021", "desde 2019", "hasta 2020" ('' when none).
export function periodText(desde, hasta) {
  if (desde && hasta) return desde === hasta ? `${desde}` : `${desde}–${hasta}`;
  if (desde) return `desde ${desde}`;
  if (hasta) return `hasta ${hasta}`;
  return '';
}

export function entityShort(id) {
  const name = entityName(id);
  const m = name.match(/^(.*?)\s*\(([^)]*)\)\s*$/);
  if (m) {
    const [, before, inside] = m;
    if (/^[A-Z0-9][A-Za-z0-9\-./]{1,8}$/.test(inside.trim())) return inside.trim();
    return before.length > 26 ? `${before.slice(0, 24)}…` : before;
  }
  return name.length > 26 ? `${name.slice(0, 24)}…` : name;
}

export function sourceLabel(category) {
  if (FENOMENO_CORTO[category]) return FENOMENO_CORTO[category];
  return (category || '').replace(/^codefest\//, 'Codefest · ').replace(/^radar\//, '');
}

const FILTROS = { fenomeno: 'fenómeno', periodo: 'periodo', entidad: 'entidad', lugar: 'territorio' };
// The filters a figure was narrowed by, in words; with the state ``s`` the period is spelled out
// ("periodo desde 2019", "periodo 2018–2021").
export const narrowText = (keys, s) => keys.map((k) => {
  if (k === 'periodo' && s && (s.desde || s.hasta)) return `periodo ${periodText(s.desde, s.hasta)}`;
  return FILTROS[k] || k;
}).join(', ');

export function escapeHtml(s) {
  return String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}
