// Radar dashboard: one page per phenomenon (map, timeline, network, heat matrix, quadrant),
// the evidence panel and the chat. State in the URL (state.js); data from /tablero/api/* and the
// service's own endpoints.
import { apiFetch, forget, showSignOut } from './auth.js';
import { Chat } from './chat.js';
import { EvidencePanel } from './evidence.js';
import {
  CAPAS, FENOMENOS, GRUPOS, VISTAS, addPlaceNames, countryName, entityName, entityShort, labels, num, periodText,
  placeName, setMeta,
} from './format.js';
import { drawHeatmap } from './heatmap.js';
import { drawAlerts, drawPlaces, drawPresence } from './map.js';
import { drawNetwork } from './network.js';
import { drawQuadrant } from './quadrant.js';
import { exportPng } from './share.js';
import { apiFilters, readState, toSearch } from './state.js';
import { drawTimeline } from './timeline.js';

const $ = (id) => document.getElementById(id);
const els = {
  pages: document.querySelectorAll('#paginas a'), views: document.querySelectorAll('#vistas button'),
  options: $('opciones'), title: $('vista-titulo'), note: $('vista-nota'), view: $('vista'), table: $('tabla-contenido'),
  desde: $('f-desde'), hasta: $('f-hasta'), entidad: $('f-entidad'), lugar: $('f-lugar'), limpiar: $('limpiar'),
  summary: $('estado-filtros'), share: $('compartir'), aviso: $('aviso'),
};

let state = readState();
let meta = null;
let selection = null;       // explicit evidence selection (not in the URL)
let frame = true;           // frame the selected territory on the next map render
let openFirstEvidence = false;
let renderToken = 0;
let lastResult = null;
const evidence = new EvidencePanel();

async function getJSON(url) {
  const r = await apiFetch(url);
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error((body.error && body.error.message) || (body.detail && body.detail.message) || `HTTP ${r.status}`);
  return body;
}

function announce(text) { els.aviso.textContent = text; }

// ------------------------------------------------------------------ navigation
function navigate(patch, { replace = false, frameIt = false, keepSelection = false, openEvidence = false } = {}) {
  const next = readState(toSearch({ ...state, ...patch }));
  state = next;
  const search = toSearch(state);
  if (search !== window.location.search) window.history[replace ? 'replaceState' : 'pushState'](null, '', search);
  if (!keepSelection) selection = null;
  frame = frameIt;
  openFirstEvidence = openEvidence;
  render();
}

window.addEventListener('popstate', () => {
  state = readState();
  selection = null;
  frame = true;
  render();
});

// ------------------------------------------------------------------ filters
function option(value, text) {
  const o = document.createElement('option');
  o.value = value;
  o.textContent = text;
  return o;
}

function fillFilters() {
  const d = meta.dates || {};
  const lo = d.year_min || 2000;
  const hi = d.year_max || new Date().getFullYear();
  for (const sel of [els.desde, els.hasta]) {
    for (let y = lo; y <= hi; y += 1) sel.appendChild(option(String(y), String(y)));
  }
  const byCat = {};
  for (const e of meta.entities || []) {
    if (!e.n_documents) continue;
    (byCat[e.category] ||= []).push(e);
  }
  const catNames = { armed_group: 'Grupos armados', actor: 'Actores', program: 'Programas', technology: 'Tecnologías' };
  for (const [cat, list] of Object.entries(byCat)) {
    const g = document.createElement('optgroup');
    g.label = catNames[cat] || cat;
    list.sort((a, b) => a.name.localeCompare(b.name, 'es'));
    for (const e of list) g.appendChild(option(e.id, `${e.name} (${num(e.n_documents)})`));
    els.entidad.appendChild(g);
  }
  const depts = (meta.places || []).filter((p) => p.level === 'department').sort((a, b) => a.name.localeCompare(b.name, 'es'));
  const countries = (meta.places || []).filter((p) => p.level === 'country' && p.n_documents)
    .map((p) => ({ ...p, label: countryName(p.code, p.name) })).sort((a, b) => a.label.localeCompare(b.label, 'es'));
  const gd = document.createElement('optgroup');
  gd.label = 'Departamentos de Colombia';
  for (const p of depts) gd.appendChild(option(p.place_id, `${p.name}${p.n_documents ? ` (${num(p.n_documents)})` : ''}`));
  const munis = (meta.places || []).filter((p) => p.level === 'municipality')
    .map((p) => ({ ...p, label: placeName(p.place_id) })).sort((a, b) => a.label.localeCompare(b.label, 'es'));
  const gm = document.createElement('optgroup');
  gm.label = 'Municipios de Colombia';
  for (const p of munis) gm.appendChild(option(p.place_id, `${p.label}${p.n_documents ? ` (${num(p.n_documents)})` : ''}`));
  const gc = document.createElement('optgroup');
  gc.label = 'Países nombrados';
  for (const p of countries) gc.appendChild(option(p.place_id, `${p.label} (${num(p.n_documents)})`));
  els.lugar.append(gd, ...(munis.length ? [gm] : []), gc);
  const onChange = () => navigate({
    desde: els.desde.value ? Number(els.desde.value) : null, hasta: els.hasta.value ? Number(els.hasta.value) : null,
    entidad: els.entidad.value || null, lugar: els.lugar.value || null,
  }, { frameIt: true });
  for (const sel of [els.desde, els.hasta, els.entidad, els.lugar]) sel.addEventListener('change', onChange);
  els.limpiar.addEventListener('click', () => navigate({ desde: null, hasta: null, entidad: null, lugar: null }));
}

function ensureOption(sel, value, text) {
  if (value && !Array.from(sel.options).some((o) => o.value === value)) sel.appendChild(option(value, text));
}

function filtersText(s) {
  const bits = [`fenómeno ${FENOMENOS[s.fenomeno]}`];
  if (s.desde || s.hasta) bits.push(`periodo ${periodText(s.desde, s.hasta)}`);
  if (s.entidad) bits.push(`entidad ${entityName(s.entidad)}`);
  if (s.lugar) bits.push(`territorio ${placeName(s.lugar)}`);
  return bits.join(' · ');
}

function syncControls() {
  els.pages.forEach((a) => {
    const f = a.dataset.fenomeno;
    a.href = toSearch({ ...state, fenomeno: f, capa: f === 'territorial' ? state.capa : 'lugares', nivel: null });
    if (f === state.fenomeno) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  });
  els.views.forEach((b) => b.setAttribute('aria-pressed', String(b.dataset.vista === state.vista)));
  // a year outside the corpus' dated range (from a link or the agent) still shows as chosen
  ensureOption(els.desde, state.desde ? String(state.desde) : null, String(state.desde));
  ensureOption(els.hasta, state.hasta ? String(state.hasta) : null, String(state.hasta));
  els.desde.value = state.desde ? String(state.desde) : '';
  els.hasta.value = state.hasta ? String(state.hasta) : '';
  ensureOption(els.entidad, state.entidad, entityName(state.entidad));
  els.entidad.value = state.entidad || '';
  ensureOption(els.lugar, state.lugar, placeName(state.lugar));
  els.lugar.value = state.lugar || '';
  els.summary.textContent = `Filtros activos: ${filtersText(state)}.`;
  document.title = `Radar — ${FENOMENOS[state.fenomeno]} — ${VISTAS[state.vista]}`;
  renderOptions();
}

function toggle(label, values, current, onPick) {
  const g = document.createElement('div');
  g.setAttribute('role', 'group');
  g.setAttribute('aria-label', label);
  g.className = 'view-switch';
  for (const [v, text] of values) {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = text;
    b.dataset.valor = v;
    b.setAttribute('aria-pressed', String(v === current));
    b.addEventListener('click', () => onPick(v));
    g.appendChild(b);
  }
  return g;
}

function selectOpt(id, label, values, current, onPick) {
  const wrap = document.createElement('span');
  const l = document.createElement('label');
  l.htmlFor = id;
  l.textContent = `${label} `;
  const s = document.createElement('select');
  s.id = id;
  for (const [v, text] of values) s.appendChild(option(v, text));
  s.value = current || '';
  s.addEventListener('change', () => onPick(s.value || null));
  wrap.append(l, s);
  return wrap;
}

function renderOptions() {
  const o = els.options;
  o.replaceChildren();
  if (state.vista === 'mapa') {
    if (state.fenomeno === 'territorial') {
      o.appendChild(toggle('Capa del mapa', Object.entries(CAPAS), state.capa, (v) => navigate({ capa: v }, { frameIt: true })));
    }
    if (state.capa === 'lugares') {
      const def = state.fenomeno === 'territorial' ? 'department' : 'country';
      o.appendChild(selectOpt('op-nivel', 'Nivel', [['department', 'Departamentos de Colombia'],
        ['municipality', 'Municipios de Colombia'], ['country', 'Países']],
        state.nivel || def, (v) => navigate({ nivel: v === def ? null : v }, { frameIt: true })));
    }
    if (state.capa === 'presencia') {
      o.appendChild(selectOpt('op-grupo', 'Grupo', [['', 'Cualquier grupo'], ...Object.entries(GRUPOS)], state.grupo,
        (v) => navigate({ grupo: v }, { frameIt: true })));
    }
  } else if (state.vista === 'tiempo') {
    o.appendChild(toggle('Granularidad', [['year', 'Por año'], ['month', 'Por mes']], state.gran, (v) => navigate({ gran: v })));
  } else if (state.vista === 'matriz') {
    o.appendChild(selectOpt('op-columnas', 'Columnas', [['source', 'Colección de origen'], ['phenomenon', 'Fenómeno']],
      state.cols, (v) => navigate({ cols: v || 'source' })));
  }
}

// ------------------------------------------------------------------ views
function apiView() {
  if (state.vista === 'mapa') {
    if (state.capa === 'alertas') return ['alerts_per_department', {}];
    if (state.capa === 'presencia') return ['armed_presence', state.grupo ? { grupo: state.grupo } : {}];
    return ['documents_per_place', {}];
  }
  return {
    tiempo: ['timeline', { granularidad: state.gran }], red: ['entity_network', {}],
    matriz: ['entity_heatmap', { columnas: state.cols }], cuadrante: ['entity_quadrant', {}],
  }[state.vista];
}

function ctx() {
  return {
    state,
    frame,
    onPlace: (placeId, opts = {}) => {
      selection = null;
      if (opts.alertType) selection = { alertType: opts.alertType, placeId };
      navigate({ lugar: placeId }, { keepSelection: !!opts.alertType });
    },
    onPresence: (row, placeId) => {
      selection = {
        vista: 'armed_presence', ids: row.ids,
        label: `${row.level2 || row.municipality_id}${row.level1 ? ` (${row.level1})` : ''}: presencia declarada`,
      };
      if (placeId && placeId !== state.lugar) navigate({ lugar: placeId }, { keepSelection: true });
      else showSelection();
    },
    onRows: (sel) => { selection = sel; showSelection(); },
    onEntity: (entityId, sel) => {
      selection = { ...sel, label: `${entityShort(entityId)}`, counted: [entityId] };
      if (entityId === state.entidad) showSelection();
      else navigate({ entidad: entityId }, { keepSelection: true });
    },
  };
}

async function render() {
  const token = ++renderToken;
  els.view.dataset.evidencia = 'cargando';
  syncControls();
  const [name, opts] = apiView();
  els.view.dataset.estado = 'cargando';
  els.title.textContent = 'Cargando…';
  const q = apiFilters(state);
  for (const [k, v] of Object.entries(opts)) q.set(k, v);
  let data;
  try {
    data = await getJSON(`/tablero/api/vista/${name}?${q}`);
  } catch (e) {
    if (token !== renderToken) return;
    els.view.replaceChildren();
    els.title.textContent = 'No pude cargar la vista';
    els.note.textContent = e.message;
    els.view.dataset.estado = 'error';
    els.view.dataset.evidencia = 'lista';
    return;
  }
  if (token !== renderToken) return;
  els.view.replaceChildren();
  if (data.materialized === false) {
    els.title.textContent = VISTAS[state.vista];
    // while `radar up` builds, the server says what and how far (build_status); else how to build it
    els.note.textContent = data.construccion
      ? `${data.message}. ${data.construccion}`
      : `${data.message}. Ejecute «radar up» o «radar materialize».`;
    els.view.dataset.estado = 'sin-datos';
    lastResult = null;
    evidence.clear();
    els.view.dataset.evidencia = 'lista';
    return;
  }
  let result;
  try {
    const c = ctx();
    if (name === 'documents_per_place') result = await drawPlaces(els.view, data, c);
    else if (name === 'alerts_per_department') result = await drawAlerts(els.view, data, c);
    else if (name === 'armed_presence') result = await drawPresence(els.view, data, c);
    else if (name === 'timeline') result = drawTimeline(els.view, data, c);
    else if (name === 'entity_network') result = drawNetwork(els.view, data, c);
    else if (name === 'entity_heatmap') result = drawHeatmap(els.view, data, c);
    else result = drawQuadrant(els.view, data, c);
  } catch (e) {
    if (token !== renderToken) return;
    els.view.replaceChildren();
    els.title.textContent = 'No pude dibujar la vista';
    els.note.textContent = e.message;
    els.view.dataset.estado = 'error';
    els.view.dataset.evidencia = 'lista';
    return;
  }
  if (token !== renderToken) return;
  lastResult = { ...result, name, data };
  if (frame && state.lugar && state.vista === 'mapa') {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = 'Ver el mapa completo';
    b.addEventListener('click', () => { frame = false; render(); });
    els.options.appendChild(b);
  }
  els.title.textContent = result.title;
  els.note.textContent = result.note;
  renderTable(result.table);
  els.view.dataset.estado = 'listo';
  els.view.dataset.vista = name;
  frame = false;
  await showSelection();
  if (token === renderToken) els.view.dataset.evidencia = 'lista';
}

function renderTable(t) {
  const table = document.createElement('table');
  const cap = document.createElement('caption');
  cap.className = 'sr-only';
  cap.textContent = els.title.textContent;
  const head = document.createElement('tr');
  t.columns.forEach((c, i) => {
    const th = document.createElement('th');
    th.scope = 'col';
    th.textContent = c;
    if (i > 0 && /Documentos|Pasajes|Alertas|Intensidad|Recientes/.test(c)) th.className = 'num';
    head.appendChild(th);
  });
  const thead = document.createElement('thead');
  thead.appendChild(head);
  const tbody = document.createElement('tbody');
  for (const row of t.rows.slice(0, 500)) {
    const tr = document.createElement('tr');
    row.forEach((v, i) => {
      const td = document.createElement('td');
      td.textContent = v;
      if (i > 0 && /^[\d.,%—–-]+$/.test(String(v))) td.className = 'num';
      tr.appendChild(td);
    });
    tbody.appendChild(tr);
  }
  table.append(cap, thead, tbody);
  els.table.replaceChildren(table);
}

// ------------------------------------------------------------------ evidence for the selection
async function placeRowId(placeId) {
  const q = apiFilters({ ...state, lugar: null });
  const d = await getJSON(`/tablero/api/vista/documents_per_place?${q}`);
  return (d.rows || []).find((r) => r.place_id === placeId);
}

function showClaims() {
  // the claims panel follows the selected place or entity (dictionary ids are claim subjects)
  if (state.lugar) evidence.showClaims({ object: state.lugar }, placeName(state.lugar));
  else if (state.entidad && !state.entidad.startsWith('country:')) evidence.showClaims({ subject: `entity:${state.entidad}` }, entityShort(state.entidad));
  else evidence.showClaims(null);
}

async function showSelection() {
  showClaims();
  const filters = apiFilters(state);
  const openFirst = openFirstEvidence;
  openFirstEvidence = false;
  const data = lastResult && lastResult.data;
  let sel = selection && selection.vista ? selection : null;
  if (!sel && state.lugar && lastResult) {
    const name = lastResult.name;
    if (name === 'alerts_per_department' && !state.lugar.startsWith('country:')) {
      // a department is its own row; a municipality: its department's rows, which the server
      // narrowed to the alerts naming the municipality (so the evidence keeps the filter)
      const muni = state.lugar.startsWith('municipality:');
      const code = state.lugar.split(':')[1].slice(0, 2);
      const type = selection && selection.alertType;
      const rows = data.rows.filter((r) => r.department_code === code && (!type || r.alert_type === type));
      if (rows.length) {
        const what = `${type ? ` (${type === 'imminent' ? 'riesgo inminente' : 'riesgo estructural'})` : ''}`;
        sel = {
          vista: name, ids: rows.map((r) => r.id),
          label: muni ? `${placeName(state.lugar)} — alertas que lo nombran${what}` : `${rows[0].department_name} — alertas${what}`,
        };
        if (!muni) filters.delete('lugar');
      }
    } else if (name === 'armed_presence') {
      const rows = data.rows.filter((r) => r.divipola_code && (`municipality:${r.divipola_code}` === state.lugar
        || `department:${r.divipola_code.slice(0, 2)}` === state.lugar));
      if (rows.length) sel = { vista: name, ids: rows.flatMap((r) => r.ids), label: `${placeName(state.lugar)}: presencia declarada` };
    }
    if (!sel) {
      const row = name === 'documents_per_place' ? data.rows.find((r) => r.place_id === state.lugar) : await placeRowId(state.lugar);
      if (row) {
        sel = { vista: 'documents_per_place', ids: [row.id], label: `${placeName(state.lugar)} — documentos que lo nombran` };
        filters.delete('lugar');
      }
    }
    if (!sel) { evidence.clear(`Ningún documento nombra ${placeName(state.lugar)} con estos filtros.`); return; }
  }
  if (!sel && state.entidad && lastResult) {
    const name = lastResult.name;
    let ids = [];
    if (name === 'entity_network') ids = data.nodes.filter((n) => n.entity_a === state.entidad).map((n) => n.id);
    else if (name === 'entity_heatmap') ids = data.rows.filter((r) => r.entity_id === state.entidad).map((r) => r.id);
    else if (name === 'entity_quadrant') ids = data.rows.filter((r) => r.entity_id === state.entidad).map((r) => r.id);
    else if (name === 'timeline') ids = data.rows.map((r) => r.id);
    if (ids.length) sel = { vista: name, ids, label: `${entityShort(state.entidad)}`, counted: [state.entidad] };
  }
  if (!sel && state.entidad && state.entidad.startsWith('country:') && lastResult) {
    // a country as the entity: the documents naming it
    const row = await placeRowId(state.entidad);
    if (row) sel = { vista: 'documents_per_place', ids: [row.id], label: `${placeName(state.entidad)} — documentos que lo nombran` };
  }
  if (!sel) { evidence.clear(); return; }
  await evidence.show(sel, filters, { openFirst });
}

// ------------------------------------------------------------------ chat drives the view
const COMPONENT = {
  mapa_lugares: { vista: 'mapa', capa: 'lugares' }, mapa_alertas: { vista: 'mapa', capa: 'alertas', fenomeno: 'territorial' },
  mapa_presencia: { vista: 'mapa', capa: 'presencia', fenomeno: 'territorial' }, linea_tiempo: { vista: 'tiempo' },
  red_entidades: { vista: 'red' }, matriz_calor: { vista: 'matriz' }, cuadrante: { vista: 'cuadrante' },
};

async function applyVisualization(vis) {
  const comp = COMPONENT[vis.componentes[0].tipo];
  if (!comp) return;
  const f = vis.filtros || {};
  let resolved = { entidad: null, lugar: null, entidad_como_lugar: null };
  if (f.entidad || f.lugar) {
    const q = new URLSearchParams();
    if (f.entidad) q.set('entidad', f.entidad);
    if (f.lugar) q.set('lugar', f.lugar);
    try { resolved = await getJSON(`/tablero/api/resolver?${q}`); } catch { /* keep nulls */ }
  }
  addPlaceNames(resolved.nombres);
  // a country the agent chose as the entity stays the entity (documents naming it); a place is the territory
  const entidad = resolved.entidad || resolved.entidad_como_lugar || null;
  const lugar = resolved.lugar || null;
  // the alerts and presence layers are territorial (the agent may leave fenomeno null): state.js
  // opens the territorial page for them; the other views keep the stated phenomenon or the page's
  const patch = {
    ...comp, fenomeno: comp.fenomeno || f.fenomeno || state.fenomeno, desde: f.desde || null, hasta: f.hasta || null,
    entidad, lugar, grupo: null, nivel: null,
  };
  if (comp.capa === 'lugares') {
    const focus = lugar || (entidad && entidad.startsWith('country:') ? entidad : null);
    if (focus) patch.nivel = focus.split(':')[0];
    if (patch.nivel === (patch.fenomeno === 'territorial' ? 'department' : 'country')) patch.nivel = null;
  }
  announce(`El agente cambió la vista a ${VISTAS[patch.vista]}${lugar ? ` y enmarcó ${placeName(lugar)}` : ''}.`);
  navigate(patch, { frameIt: true, openEvidence: !!lugar });
}

// Places the reference data does not list (a municipality nothing names, a country as the entity):
// their names from the resolver, so the filter controls and the summary never show a bare id.
async function nameUnlisted(s) {
  const q = new URLSearchParams();
  if (s.lugar && !labels.places[s.lugar]) q.set('lugar', s.lugar);
  if (s.entidad && s.entidad.startsWith('country:') && !labels.places[s.entidad]) q.set('entidad', s.entidad);
  if (![...q.keys()].length) return;
  try { addPlaceNames((await getJSON(`/tablero/api/resolver?${q}`)).nombres); } catch { /* the id is shown */ }
}

// ------------------------------------------------------------------ share
async function share() {
  const svg = els.view.querySelector('svg');
  if (!svg || !lastResult) return;
  els.share.disabled = true;
  try {
    const info = await exportPng({
      svgNode: svg, title: `${FENOMENOS[state.fenomeno]} — ${lastResult.title}`, filters: filtersText(state),
      sources: ['precómputos de Radar', ...lastResult.sources], url: window.location.href,
      filename: `radar-${state.fenomeno}-${state.vista}${state.vista === 'mapa' ? `-${state.capa}` : ''}.png`,
    });
    announce(`Imagen PNG generada (${num(info.width)} × ${num(info.height)} píxeles).`);
  } catch (e) {
    announce(`No pude generar la imagen: ${e.message}`);
  } finally {
    els.share.disabled = false;
  }
}

// ------------------------------------------------------------------ start
async function init() {
  showSignOut();
  document.getElementById('salir').addEventListener('click', () => { forget(); window.location.reload(); });
  try {
    meta = await getJSON('/tablero/api/meta');
  } catch (e) {
    meta = { entities: [], places: [], modo: 'offline', modelo: {} };
    els.note.textContent = `Sin datos de referencia: ${e.message}`;
  }
  setMeta(meta);
  await nameUnlisted(state);
  fillFilters();
  // a map reached by switching view, layer or level frames the territory filter, as a link does
  els.views.forEach((b) => b.addEventListener('click', () => navigate({ vista: b.dataset.vista }, { frameIt: true })));
  els.pages.forEach((a) => a.addEventListener('click', (e) => {
    if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    const f = a.dataset.fenomeno;
    navigate({ fenomeno: f, capa: f === 'territorial' ? state.capa : 'lugares', nivel: null });
  }));
  els.share.addEventListener('click', share);
  window.radar = {
    chat: new Chat({
      meta,
      onVisualization: applyVisualization,
      onCitation: (doc, chunk, label) => evidence.openCitation(doc, chunk, `Pasaje citado en la respuesta ${label}: ${chunk}`),
    }),
    state: () => ({ ...state }),
    labels,
  };
  // a past answer's link (`#respuesta=<run_id>`): reopened in the chat with whether it still stands
  const reopen = new URLSearchParams(window.location.hash.slice(1)).get('respuesta');
  if (window.location.search !== toSearch(state)) window.history.replaceState(null, '', toSearch(state) + window.location.hash);
  await render();
  if (reopen) await window.radar.chat.reopen(reopen);
  window.addEventListener('hashchange', () => {
    const id = new URLSearchParams(window.location.hash.slice(1)).get('respuesta');
    if (id) window.radar.chat.reopen(id);
  });
}

init();
