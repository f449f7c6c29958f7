// The map: three separate questions, never mixed into one colour.
//   lugares   — documents naming each country / Colombian department (naming is not acting);
//   alertas   — Ombudsman alerts per department, one map per alert type (never summed);
//   presencia — declared armed-group presence per municipality, "no information" hatched.
import { activate, countScale, hatch, heading, legend, makeSvg, sourceLine } from './chart.js';
import {
  ALERTAS, ESTADOS, GRUPOS, MUTED, countryName, narrowText, num, placeName, plural,
} from './format.js';

const GEO = '/tablero/static/geo/';
const cache = {};
export async function geo(name) {
  if (!cache[name]) {
    cache[name] = fetch(`${GEO}${name}.json`).then((r) => {
      if (!r.ok) throw new Error(`límites ${name} no disponibles (ejecute api/dashboard/build.py)`);
      return r.json();
    });
  }
  return cache[name];
}

const ZERO = '#eef0f3';
const SELECTED = '#111111'; // not the focus orange: it would vanish on the alerts' orange scale

// Frame a feature inside the box {x, y, w, h} of the SVG (the group must be clipped to it).
function frameTo(g, path, feature, box, maxZoom = 6) {
  const [[x0, y0], [x1, y1]] = path.bounds(feature);
  const k = Math.min(maxZoom, 0.75 / Math.max((x1 - x0) / box.w, (y1 - y0) / box.h));
  const tx = box.x + box.w / 2 - k * (x0 + x1) / 2;
  const ty = box.y + box.h / 2 - k * (y0 + y1) / 2;
  g.attr('transform', `translate(${tx},${ty}) scale(${k})`);
  g.selectAll('path').attr('vector-effect', 'non-scaling-stroke');
}

// The selected territory's outline; data-seleccion carries its place id (department:18, municipality:52835).
function selectedOutline(g, path, feature, placeId) {
  g.append('path').datum(feature).attr('d', path).attr('fill', 'none').attr('stroke', SELECTED)
    .attr('stroke-width', 3.5).attr('vector-effect', 'non-scaling-stroke').attr('pointer-events', 'none')
    .attr('class', 'seleccion').attr('data-seleccion', placeId || null).attr('aria-hidden', 'true');
}

// The boundary of a Colombian department or municipality, or a country (null when the boundaries
// have none): the maps frame and outline the territory filter on whatever level they draw.
async function placeFeature(placeId) {
  if (!placeId) return null;
  const [level, code] = placeId.split(':');
  if (level === 'municipality') return (await geo('co_municipalities')).features.find((f) => f.properties.code === code) || null;
  if (level === 'department') return (await geo('co_departments')).features.find((f) => f.properties.id === code) || null;
  if (level === 'country') return (await geo('world')).features.find((f) => f.properties.id === code) || null;
  return null;
}

// The legend row of the territory filter: its outline and its name.
function filterItem(placeId) {
  const name = placeName(placeId);
  const m = name.match(/^(.*) \((.*)\)$/);
  return { fill: 'none', stroke: SELECTED, strokeWidth: 2.5, label: 'Filtro de territorio:', lines: m ? [m[1], `(${m[2]})`] : [name] };
}

// Frame (when asked) and outline the territory filter on a map drawn at any level. A municipality
// on a department map gets its department's municipal borders as context (thin, not interactive).
async function markSelected(g, path, feature, placeId, frame, box, { context = false } = {}) {
  if (!feature) return;
  if (context && placeId.startsWith('municipality:')) {
    const dept = placeId.split(':')[1].slice(0, 2);
    const munis = (await geo('co_municipalities')).features.filter((f) => f.properties.dept === dept);
    g.append('g').attr('class', 'contexto-municipal').attr('aria-hidden', 'true').attr('pointer-events', 'none')
      .selectAll('path').data(munis).join('path').attr('d', path).attr('fill', 'none')
      .attr('stroke', '#7a8594').attr('stroke-width', 0.6);
  }
  // a municipality is small: let it fill most of the box (a department or country stays in context)
  if (frame) frameTo(g, path, feature, box, placeId.startsWith('municipality:') ? 40 : 6);
  selectedOutline(g, path, feature, placeId);
}

// ---------------------------------------------------------------- documents naming each place
const LEVELS = {
  department: { geo: 'co_departments', title: 'Documentos que nombran cada departamento de Colombia' },
  municipality: { geo: 'co_municipalities', title: 'Documentos que nombran cada municipio de Colombia' },
  country: { geo: 'world', title: 'Documentos que nombran cada país' },
};

export async function drawPlaces(container, data, ctx) {
  const { state } = ctx;
  const level = state.nivel || (state.fenomeno === 'territorial' ? 'department' : 'country');
  const fc = await geo(LEVELS[level].geo);
  const depts = level === 'municipality' ? await geo('co_departments') : null;
  const sources = await geo('sources');
  const rows = data.rows.filter((r) => r.level === level);
  const byId = new Map(rows.map((r) => [r.place_id, r]));
  const pid = (f) => `${level}:${level === 'municipality' ? f.properties.code : f.properties.id}`;
  const colombia = level !== 'country';
  const width = 940;
  const height = colombia ? 620 : 520;
  const mapW = width - 230;
  const { title } = LEVELS[level];
  const svg = makeSvg(container, { width, height, title });
  heading(svg, 16, 24, title);
  svg.append('text').attr('x', 16).attr('y', 42).attr('font-size', 12).attr('fill', MUTED)
    .text('Nombrar no es actuar: se cuentan documentos que mencionan el lugar o un lugar dentro de él.');
  const projection = colombia
    ? d3.geoMercator().fitExtent([[16, 56], [mapW, height - 40]], depts || fc)
    : d3.geoNaturalEarth1().fitExtent([[8, 56], [mapW, height - 40]], fc);
  const path = d3.geoPath(projection);
  const max = d3.max(rows, (r) => r.n_documents) || 1;
  const { scale, items } = countScale(max, d3.schemeBlues);
  const clip = svg.append('clipPath').attr('id', 'recorte-mapa');
  clip.append('rect').attr('x', 0).attr('y', 50).attr('width', mapW + 10).attr('height', height - 80);
  const g = svg.append('g').attr('clip-path', 'url(#recorte-mapa)').append('g').attr('class', 'territorios');
  const name = (f) => {
    if (level === 'country') return countryName(f.properties.id, f.properties.name);
    const n = (byId.get(pid(f)) || {}).name || f.properties.name;
    return level === 'municipality' ? `${n} (${f.properties.dept_name})` : n;
  };
  const paths = g.selectAll('path.territorio').data(fc.features).join('path')
    .attr('class', 'territorio')
    .attr('d', path)
    .attr('fill', (f) => (byId.has(pid(f)) ? scale(byId.get(pid(f)).n_documents) : ZERO))
    .attr('stroke', '#ffffff').attr('stroke-width', level === 'municipality' ? 0.3 : 0.8)
    .attr('data-place', pid);
  if (depts) { // department borders over the municipalities, for orientation
    g.append('g').attr('aria-hidden', 'true').attr('pointer-events', 'none').selectAll('path').data(depts.features)
      .join('path').attr('d', path).attr('fill', 'none').attr('stroke', '#5b6573').attr('stroke-width', 0.7);
  }
  paths.append('title').text((f) => {
    const r = byId.get(pid(f));
    return `${name(f)}: ${r ? plural(r.n_documents, 'documento', 'documentos') : 'ningún documento lo nombra'}`;
  });
  const withData = paths.filter((f) => byId.has(pid(f)));
  withData.attr('aria-label', (f) => `${name(f)}: ${plural(byId.get(pid(f)).n_documents, 'documento', 'documentos')}`)
    .attr('data-n', (f) => byId.get(pid(f)).n_documents);
  activate(withData, (event, f) => ctx.onPlace(pid(f)));
  // the territory filter, on this level or another (a municipality on the department map)
  const sel = fc.features.find((f) => pid(f) === state.lugar) || await placeFeature(state.lugar);
  await markSelected(g, path, sel, state.lugar, ctx.frame, { x: 0, y: 50, w: mapW, h: height - 80 }, { context: level !== 'municipality' });
  legend(svg, mapW + 24, 80, 'Documentos', [
    { fill: ZERO, label: 'ninguno lo nombra' }, ...items,
    ...(sel ? [filterItem(state.lugar)] : [])]);
  const src = { department: sources.co_departments, municipality: sources.co_municipalities, country: sources.world }[level];
  sourceLine(svg, 16, height - 12, `agg_documents_per_place (precómputos de Radar) · límites: ${src}`);
  const drawn = new Set(fc.features.map(pid));
  const missing = rows.filter((r) => !drawn.has(r.place_id));
  const narrowed = data.narrowed_by.length ? ` Recuento restringido por ${narrowText(data.narrowed_by, state)}.` : '';
  return {
    title,
    note: `${plural(rows.length, 'territorio nombrado', 'territorios nombrados')}.${narrowed}`
      + (missing.length ? ` Sin geometría en el mapa: ${missing.map((r) => (level === 'country' ? countryName(r.code, r.name) : r.name)).join(', ')}.` : ''),
    table: {
      columns: ['Territorio', 'Documentos', 'Nombrado directamente', 'Pasajes'],
      rows: rows.slice().sort((a, b) => b.n_documents - a.n_documents)
        .map((r) => [level === 'country' ? countryName(r.code, r.name) : r.name, num(r.n_documents),
          num(r.n_documents_direct), num(r.n_passages)]),
    },
    sources: ['agg_documents_per_place', src],
  };
}

// ---------------------------------------------------------------- Ombudsman alerts
export async function drawAlerts(container, data, ctx) {
  const { state } = ctx;
  const fc = await geo('co_departments');
  const sources = await geo('sources');
  const selFeature = state.lugar && !state.lugar.startsWith('country:') ? await placeFeature(state.lugar) : null;
  // imminent and structural always; "type not stated" as a third map when the sources have such alerts
  const types = ['imminent', 'structural', ...(data.rows.some((r) => r.alert_type === 'unspecified') ? ['unspecified'] : [])];
  const byType = Object.fromEntries(types.map((t) => [t, new Map(data.rows.filter((r) => r.alert_type === t)
    .map((r) => [r.department_code, r]))]));
  const others = data.rows.filter((r) => !types.includes(r.alert_type));
  const width = 960;
  const height = types.length === 3 ? 470 : 600;
  const panelW = types.length === 3 ? 262 : 380;
  const title = 'Alertas tempranas de la Defensoría por departamento';
  const svg = makeSvg(container, { width, height, title });
  heading(svg, 16, 24, title);
  svg.append('text').attr('x', 16).attr('y', 42).attr('font-size', 12).attr('fill', MUTED)
    .text(`Cada tipo de alerta en su propio mapa: ${types.map((t) => ALERTAS[t].toLowerCase()).join(', ').replace(/, ([^,]*)$/, ' y $1')} nunca se suman.`);
  const max = d3.max(data.rows, (r) => r.n_alerts) || 1;
  const { scale, items } = countScale(max, d3.schemeOranges);
  for (const [i, t] of types.entries()) {
    const x0 = 10 + i * (panelW + 10);
    const projection = d3.geoMercator().fitExtent([[x0 + 6, 78], [x0 + panelW, height - 40]], fc);
    const path = d3.geoPath(projection);
    const rows = byType[t];
    svg.append('text').attr('x', x0 + 8).attr('y', 68).attr('font-weight', 'bold').attr('font-size', 13)
      .text(`${ALERTAS[t]} · ${plural(new Set(Array.from(rows.values()).flatMap((r) => r.alert_codes)).size, 'alerta', 'alertas')}`);
    svg.append('clipPath').attr('id', `recorte-${t}`).append('rect').attr('x', x0).attr('y', 76)
      .attr('width', panelW + 8).attr('height', height - 110);
    const g = svg.append('g').attr('clip-path', `url(#recorte-${t})`).append('g').attr('class', `territorios alertas-${t}`);
    const paths = g.selectAll('path').data(fc.features).join('path').attr('d', path)
      .attr('fill', (f) => (rows.has(f.properties.id) ? scale(rows.get(f.properties.id).n_alerts) : ZERO))
      .attr('stroke', '#ffffff').attr('stroke-width', 0.8)
      .attr('data-place', (f) => `department:${f.properties.id}`).attr('data-tipo', t);
    paths.append('title').text((f) => {
      const r = rows.get(f.properties.id);
      return `${f.properties.name} — ${ALERTAS[t].toLowerCase()}: ${r ? `${plural(r.n_alerts, 'alerta', 'alertas')} (${r.alert_codes.join(', ')})` : 'ninguna alerta'}`;
    });
    const withData = paths.filter((f) => rows.has(f.properties.id));
    withData.attr('aria-label', (f) => `${f.properties.name}, ${ALERTAS[t].toLowerCase()}: ${plural(rows.get(f.properties.id).n_alerts, 'alerta', 'alertas')}`)
      .attr('data-n', (f) => rows.get(f.properties.id).n_alerts);
    activate(withData, (event, f) => ctx.onPlace(`department:${f.properties.id}`, { alertType: t }));
    await markSelected(g, path, selFeature, state.lugar, ctx.frame, { x: x0, y: 76, w: panelW, h: height - 110 }, { context: true });
  }
  legend(svg, types.length * (panelW + 10) + 20, 90, 'Alertas', [{ fill: ZERO, label: 'ninguna' }, ...items,
    ...(selFeature ? [filterItem(state.lugar)] : [])]);
  sourceLine(svg, 16, height - 12, `agg_alerts_per_department (early_warnings) · límites: ${sources.co_departments}`);
  const narrowed = data.narrowed_by.length ? ` Alertas restringidas por ${narrowText(data.narrowed_by, state)}`
    + `${data.narrowed_by.includes('lugar') ? ` (las que nombran ${placeName(state.lugar)})` : ''}.` : '';
  const otherNote = others.length
    ? ` Además, sin mapa: ${others.map((r) => `${r.department_name} (${ALERTAS[r.alert_type] || r.alert_type}: ${num(r.n_alerts)})`).join('; ')}.`
    : '';
  return {
    title,
    note: `Cada departamento cuenta las alertas que nombran un lugar dentro de él.${narrowed}${otherNote}`,
    table: {
      columns: ['Departamento', 'Tipo', 'Alertas', 'Códigos'],
      rows: data.rows.map((r) => [r.department_name, ALERTAS[r.alert_type] || r.alert_type, num(r.n_alerts), r.alert_codes.join(', ')]),
    },
    sources: ['agg_alerts_per_department', sources.co_departments],
  };
}

// ---------------------------------------------------------------- declared armed presence
const STATE_FILL = { present: '#b2182b', absent: '#dfe7f0' };

export async function drawPresence(container, data, ctx) {
  const { state } = ctx;
  const [munis, provinces, depts, world, basin, sources] = await Promise.all([
    geo('co_municipalities'), geo('pe_provinces'), geo('co_departments'), geo('world'), geo('amazon_basin'), geo('sources')]);
  const byShape = new Map(data.rows.filter((r) => r.shape_key).map((r) => [r.shape_key, r]));
  const feats = [...munis.features, ...provinces.features].filter((f) => byShape.has(f.properties.id));
  const noShape = data.rows.filter((r) => !r.shape_key);
  const width = 940;
  const height = 620;
  const mapW = width - 250;
  const group = data.group;
  const title = group
    ? `Presencia declarada de ${GRUPOS[group] || group} por municipio (Amazonía)`
    : 'Presencia declarada de grupos armados por municipio (Amazonía)';
  const svg = makeSvg(container, { width, height, title });
  heading(svg, 16, 24, title);
  svg.append('text').attr('x', 16).attr('y', 42).attr('font-size', 12).attr('fill', MUTED)
    .text('Presencia declarada en los registros, no intensidad. «Sin información» nunca se muestra como ausencia.');
  const noInfo = hatch(svg, 'rayado-sin-informacion');
  const frameFc = { type: 'FeatureCollection', features: feats.length ? feats : depts.features };
  const projection = d3.geoMercator().fitExtent([[30, 70], [mapW - 20, height - 50]], frameFc);
  const path = d3.geoPath(projection);
  const clipId = 'recorte-presencia';
  svg.append('clipPath').attr('id', clipId).append('rect').attr('x', 0).attr('y', 50).attr('width', mapW).attr('height', height - 80);
  const root = svg.append('g').attr('clip-path', `url(#${clipId})`);
  const g = root.append('g');
  const bg = g.append('g').attr('aria-hidden', 'true');
  bg.selectAll('path.pais').data(world.features).join('path').attr('class', 'pais').attr('d', path)
    .attr('fill', '#f6f7f9').attr('stroke', '#c9ced6').attr('stroke-width', 0.6);
  bg.selectAll('path.depto').data(depts.features).join('path').attr('class', 'depto').attr('d', path)
    .attr('fill', 'none').attr('stroke', '#aab2bd').attr('stroke-width', 0.6);
  bg.append('path').datum(basin.features[0]).attr('d', path).attr('fill', 'none').attr('stroke', '#2e7d32')
    .attr('stroke-width', 1.2).attr('stroke-dasharray', '5 3');
  const fill = (r) => (r.state === 'no_info' ? noInfo : STATE_FILL[r.state]);
  const label = (r) => `${r.level2 || r.municipality_id}${r.level1 ? ` (${r.level1})` : ''}`;
  const describe = (r) => {
    const parts = [`${label(r)}: ${ESTADOS[r.state].toLowerCase()}`];
    if (r.present.length) parts.push(`presentes: ${r.present.map((k) => GRUPOS[k] || k).join(', ')}`);
    if (!group && r.no_info.length && r.state !== 'no_info') parts.push(`sin información: ${r.no_info.map((k) => GRUPOS[k] || k).join(', ')}`);
    return parts.join('; ');
  };
  const paths = g.append('g').attr('class', 'territorios').selectAll('path').data(feats).join('path')
    .attr('d', path)
    .attr('fill', (f) => fill(byShape.get(f.properties.id)))
    .attr('stroke', '#4a5360').attr('stroke-width', 0.8)
    .attr('data-estado', (f) => byShape.get(f.properties.id).state)
    .attr('data-municipio', (f) => byShape.get(f.properties.id).municipality_id)
    .attr('aria-label', (f) => describe(byShape.get(f.properties.id)));
  paths.append('title').text((f) => describe(byShape.get(f.properties.id)));
  activate(paths, (event, f) => {
    const r = byShape.get(f.properties.id);
    const placeId = r.divipola_code ? `municipality:${r.divipola_code}` : null;
    ctx.onPresence(r, placeId);
  });
  if (feats.length <= 25 && !(ctx.frame && state.lugar)) {
    g.append('g').attr('aria-hidden', 'true').selectAll('text').data(feats).join('text')
      .attr('x', (f) => path.centroid(f)[0]).attr('y', (f) => path.centroid(f)[1]).attr('text-anchor', 'middle')
      .attr('font-size', 10.5).attr('paint-order', 'stroke').attr('stroke', '#ffffff').attr('stroke-width', 3)
      .attr('fill', '#1b1f24').attr('pointer-events', 'none').text((f) => f.properties.name);
  }
  // the territory filter: a municipality (with or without presence records) or a department
  const lugarRows = state.lugar ? data.rows.filter((r) => r.divipola_code && (`municipality:${r.divipola_code}` === state.lugar
    || `department:${r.divipola_code.slice(0, 2)}` === state.lugar)) : [];
  const selFeature = state.lugar && !state.lugar.startsWith('country:') ? await placeFeature(state.lugar) : null;
  await markSelected(g, path, selFeature, state.lugar, ctx.frame, { x: 0, y: 50, w: mapW, h: height - 80 });
  const counts = d3.rollup(feats, (v) => v.length, (f) => byShape.get(f.properties.id).state);
  const leg = legend(svg, mapW + 20, 80, 'Municipios en el mapa', [
    { fill: STATE_FILL.present, label: `${ESTADOS.present} (${num(counts.get('present') || 0)})` },
    { fill: STATE_FILL.absent, label: `${ESTADOS.absent} (${num(counts.get('absent') || 0)})` },
    { fill: noInfo, label: `${ESTADOS.no_info} (${num(counts.get('no_info') || 0)})` },
    { fill: '#f6f7f9', stroke: '#c9ced6', label: 'Sin registro en los datos' },
    { fill: 'none', stroke: '#2e7d32', dash: '5 3', label: 'Cuenca amazónica' },
    ...(selFeature ? [filterItem(state.lugar)] : []),
  ]);
  if (!group) {
    svg.append('text').attr('x', mapW + 20).attr('y', leg.bottom + 18).attr('font-size', 11).attr('fill', MUTED)
      .selectAll('tspan').data(['Cualquier grupo: presencia si un', 'registro declara alguno; sin', 'información si ningún grupo', 'tiene dato.'])
      .join('tspan').attr('x', mapW + 20).attr('dy', (d, i) => (i ? 14 : 0)).text((d) => d);
  }
  sourceLine(svg, 16, height - 12, `armed_presence (registros Amazon Underworld del corpus) · límites: ${sources.co_municipalities}; ${sources.pe_provinces}`);
  const notes = [];
  if (noShape.length) {
    const byCountry = d3.rollups(noShape, (v) => [v.length, v.filter((r) => r.state === 'present').length], (r) => r.country || '—')
      .sort((a, b) => b[1][0] - a[1][0]);
    notes.push(`Sin límites municipales en el mapa (están en la tabla): ${byCountry.map(([c, [n, p]]) => `${countryName(c, c)} ${num(n)}`
      + ` (${num(p)} con presencia declarada)`).join('; ')}.`);
  }
  if (selFeature && !lugarRows.length) notes.push(`Los registros de presencia no incluyen ${placeName(state.lugar)}.`);
  for (const n of data.not_applied || []) notes.push(`No aplica: ${n}.`);
  return {
    title,
    note: `${plural(data.rows.length, 'municipio con registro', 'municipios con registro')}, ${num(feats.length)} en el mapa. ${notes.join(' ')}`,
    table: {
      columns: ['Municipio', 'País', 'Estado', 'Grupos presentes', 'Sin información'],
      rows: data.rows.map((r) => [label(r), r.country || '—', ESTADOS[r.state], r.present.map((k) => GRUPOS[k] || k).join(', ') || '—',
        r.no_info.map((k) => GRUPOS[k] || k).join(', ') || '—']),
    },
    sources: ['armed_presence', sources.co_municipalities, sources.pe_provinces],
  };
}

export function placeLabel(placeId) {
  return placeName(placeId);
}
