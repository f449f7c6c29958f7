// Intensity-vs-trend quadrant. The split lines are the medians computed by the precompute
// (never fixed); no score is derived.
import { activate, heading, legend, makeSvg, sourceLine } from './chart.js';
import {
  CATEGORIAS, CATEGORY_COLORS, FOCUS, MUTED, dec, entityName, entityShort, num, pct, plural,
} from './format.js';

const QUADS = {
  high_intensity_rising: 'Alta intensidad · en alza',
  high_intensity_declining: 'Alta intensidad · a la baja',
  low_intensity_rising: 'Baja intensidad · en alza',
  low_intensity_declining: 'Baja intensidad · a la baja',
};

export function drawQuadrant(container, data, ctx) {
  const { state } = ctx;
  const rows = data.rows;
  const med = data.medians || { intensity: 0, trend: 0, cutoff_date: '—' };
  const width = 940;
  const height = 600;
  const m = { top: 70, right: 210, bottom: 70, left: 70 };
  const title = 'Cuadrante intensidad–tendencia';
  const svg = makeSvg(container, { width, height, title });
  heading(svg, 16, 24, title);
  svg.append('text').attr('x', 16).attr('y', 42).attr('font-size', 12).attr('fill', MUTED)
    .text(`Intensidad: documentos con fecha que nombran la entidad. Tendencia: proporción publicada después de ${med.cutoff_date} (mediana).`);
  const maxI = d3.max(rows, (r) => r.intensity) || 1;
  const useLog = maxI >= 20;
  const x = (useLog ? d3.scaleLog().domain([1, maxI * 1.1]) : d3.scaleLinear().domain([0, maxI * 1.08 + 0.5]))
    .range([m.left, width - m.right]).nice();
  const y = d3.scaleLinear().domain([-0.04, 1.04]).range([height - m.bottom, m.top]);
  svg.append('g').attr('transform', `translate(0,${height - m.bottom})`).attr('aria-hidden', 'true')
    .call((useLog ? d3.axisBottom(x).tickValues([1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000]
      .filter((v) => v >= x.domain()[0] && v <= x.domain()[1])) : d3.axisBottom(x).ticks(8))
      .tickFormat((v) => (Number.isInteger(v) ? num(v) : '')))
    .call((g) => g.selectAll('text').attr('font-size', 11).attr('fill', '#1b1f24'));
  svg.append('g').attr('transform', `translate(${m.left},0)`).attr('aria-hidden', 'true')
    .call(d3.axisLeft(y).tickValues([0, 0.2, 0.4, 0.6, 0.8, 1]).tickFormat(pct))
    .call((g) => g.selectAll('text').attr('font-size', 11).attr('fill', '#1b1f24'));
  svg.append('text').attr('x', (m.left + width - m.right) / 2).attr('y', height - 30).attr('text-anchor', 'middle')
    .attr('font-size', 12).attr('fill', MUTED).text(`Intensidad (documentos con fecha${useLog ? ', escala logarítmica' : ''})`);
  svg.append('text').attr('transform', `translate(20,${(height - m.bottom + m.top) / 2}) rotate(-90)`).attr('text-anchor', 'middle')
    .attr('font-size', 12).attr('fill', MUTED).text('Tendencia (proporción reciente)');
  const mx = x(Math.max(useLog ? 1 : 0, med.intensity));
  const my = y(med.trend);
  const lines = svg.append('g').attr('class', 'medianas');
  lines.append('line').attr('x1', mx).attr('x2', mx).attr('y1', m.top).attr('y2', height - m.bottom)
    .attr('stroke', '#1b1f24').attr('stroke-dasharray', '6 4').attr('stroke-width', 1.2);
  lines.append('line').attr('x1', m.left).attr('x2', width - m.right).attr('y1', my).attr('y2', my)
    .attr('stroke', '#1b1f24').attr('stroke-dasharray', '6 4').attr('stroke-width', 1.2);
  lines.append('text').attr('x', mx).attr('y', m.top - 6).attr('text-anchor', 'middle').attr('font-size', 11).attr('fill', MUTED)
    .text(`mediana de intensidad = ${dec(med.intensity)}`);
  lines.append('text').attr('x', width - m.right + 6).attr('y', my + 4).attr('font-size', 11)
    .attr('fill', MUTED).text(`mediana de tendencia = ${pct(med.trend)}`);
  // quadrant names at the centre of each quadrant (corners are where extreme points sit)
  const q = svg.append('g').attr('aria-hidden', 'true').attr('font-size', 12).attr('fill', MUTED).attr('font-style', 'italic')
    .attr('text-anchor', 'middle').attr('opacity', 0.9);
  const xl = (m.left + mx) / 2;
  const xr = (mx + width - m.right) / 2;
  const yt = (m.top + my) / 2;
  const yb = (my + height - m.bottom) / 2;
  q.append('text').attr('x', xr).attr('y', yt).text(QUADS.high_intensity_rising);
  q.append('text').attr('x', xl).attr('y', yt).text(QUADS.low_intensity_rising);
  q.append('text').attr('x', xr).attr('y', yb + 4).text(QUADS.high_intensity_declining);
  q.append('text').attr('x', xl).attr('y', yb + 4).text(QUADS.low_intensity_declining);
  // jitter identical points deterministically so every entity stays clickable
  const seen = new Map();
  const pos = rows.map((r) => {
    const k = `${r.intensity}|${r.trend}`;
    const i = seen.get(k) || 0;
    seen.set(k, i + 1);
    const a = i * 2.4;
    const rad = i ? 6 * Math.sqrt(i) : 0;
    return { ...r, dup: i, px: x(Math.max(useLog ? 1 : 0, r.intensity)) + rad * Math.cos(a), py: y(r.trend) + rad * Math.sin(a) };
  });
  const pts = svg.append('g').attr('class', 'puntos').selectAll('g').data(pos).join('g')
    .attr('transform', (p) => `translate(${p.px},${p.py})`).attr('data-entidad', (p) => p.entity_id)
    .attr('aria-label', (p) => `${entityShort(p.entity_id)} — ${entityName(p.entity_id)}: intensidad ${num(p.intensity)}, tendencia ${pct(p.trend)}, ${QUADS[p.quadrant]}`);
  pts.append('circle').attr('r', (p) => (p.entity_id === state.entidad ? 8 : 5.5))
    .attr('fill', (p) => CATEGORY_COLORS[p.entity_category] || CATEGORY_COLORS.unknown).attr('fill-opacity', 0.85)
    .attr('stroke', (p) => (p.entity_id === state.entidad ? FOCUS : '#ffffff')).attr('stroke-width', (p) => (p.entity_id === state.entidad ? 3 : 1));
  pts.append('title').text((p) => `${entityShort(p.entity_id)} — ${entityName(p.entity_id)}: intensidad ${num(p.intensity)} (${num(p.n_recent)} recientes), tendencia ${pct(p.trend)}`);
  // labels: the selected entity first, then by intensity, skipping any that would overlap one already placed
  const labelled = new Set();
  const boxes = [];
  const order = pos.slice().sort((a, b) => (b.entity_id === state.entidad) - (a.entity_id === state.entidad)
    || b.intensity - a.intensity || a.entity_id.localeCompare(b.entity_id));
  for (const p of order) {
    const dy = 4 - (p.dup % 2 ? 1 : -1) * Math.ceil(p.dup / 2) * 13;
    const box = { x0: p.px + 6, x1: p.px + 10 + entityShort(p.entity_id).length * 6.6, y0: p.py + dy - 10, y1: p.py + dy + 3 };
    const hit = boxes.some((b) => box.x0 < b.x1 && box.x1 > b.x0 && box.y0 < b.y1 && box.y1 > b.y0)
      || pos.some((o) => o !== p && o.px > box.x0 - 4 && o.px < box.x1 && o.py > box.y0 - 3 && o.py < box.y1 + 3);
    if ((!hit && p.dup <= 2 && labelled.size < 24) || p.entity_id === state.entidad) { labelled.add(p.entity_id); boxes.push(box); }
  }
  pts.filter((p) => labelled.has(p.entity_id)).append('text').attr('x', 8).attr('y', (p) => 4 - (p.dup % 2 ? 1 : -1) * Math.ceil(p.dup / 2) * 13).attr('font-size', 11)
    .attr('font-weight', (p) => (p.entity_id === state.entidad ? 'bold' : 'normal'))
    .attr('paint-order', 'stroke').attr('stroke', '#ffffff').attr('stroke-width', 3).attr('fill', '#1b1f24')
    .text((p) => entityShort(p.entity_id));
  activate(pts, (event, p) => ctx.onEntity(p.entity_id, { vista: 'entity_quadrant', ids: [p.id] }));
  const cats = Array.from(new Set(rows.map((r) => r.entity_category)));
  legend(svg, width - m.right + 20, m.top + 10, 'Categoría', cats.map((c) => ({ fill: CATEGORY_COLORS[c] || CATEGORY_COLORS.unknown, label: CATEGORIAS[c] || c })));
  sourceLine(svg, 16, height - 10, 'agg_entity_quadrant (cortes = medianas calculadas; sin puntaje de riesgo)');
  const notes = [];
  for (const n of data.not_applied || []) notes.push(`No aplica: ${n}.`);
  if (state.entidad && rows.some((r) => r.entity_id === state.entidad)) notes.push(`Resaltada: ${entityName(state.entidad)}.`);
  return {
    title,
    note: `${plural(rows.length, 'entidad', 'entidades')} con documentos fechados. ${notes.join(' ')}`,
    table: {
      columns: ['Entidad', 'Intensidad', 'Recientes', 'Tendencia', 'Cuadrante'],
      rows: rows.slice().sort((a, b) => b.intensity - a.intensity)
        .map((r) => [entityName(r.entity_id), num(r.intensity), num(r.n_recent), pct(r.trend), QUADS[r.quadrant] || r.quadrant]),
    },
    sources: ['agg_entity_quadrant'],
  };
}
