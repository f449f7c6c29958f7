// Entity × category heat matrix: documents naming the entity per source collection or phenomenon.
import { activate, countScale, heading, legend, makeSvg, sourceLine } from './chart.js';
import { FOCUS, MUTED, entityName, entityShort, narrowText, num, plural, sourceLabel } from './format.js';

const MAX_ROWS = 25;
const MAX_COLS = 14;

export function drawHeatmap(container, data, ctx) {
  const { state } = ctx;
  const totals = d3.rollup(data.rows, (v) => d3.sum(v, (r) => r.n_documents), (r) => r.entity_id);
  const colTotals = d3.rollup(data.rows, (v) => d3.sum(v, (r) => r.n_documents), (r) => r.category);
  let ents = Array.from(totals.keys()).sort((a, b) => totals.get(b) - totals.get(a) || a.localeCompare(b)).slice(0, MAX_ROWS);
  if (state.entidad && totals.has(state.entidad) && !ents.includes(state.entidad)) ents = [...ents.slice(0, MAX_ROWS - 1), state.entidad];
  const cols = Array.from(colTotals.keys()).sort((a, b) => colTotals.get(b) - colTotals.get(a) || a.localeCompare(b)).slice(0, MAX_COLS);
  const cells = data.rows.filter((r) => ents.includes(r.entity_id) && cols.includes(r.category));
  const kind = data.column_kind === 'phenomenon' ? 'fenómeno' : 'colección de origen';
  const title = state.entidad
    ? `Matriz entidad × ${kind} en documentos que nombran ${entityName(state.entidad)}`
    : `Matriz entidad × ${kind}`;
  const left = 210;
  const top = 150;
  const cw = Math.max(36, Math.min(70, Math.floor(560 / Math.max(1, cols.length))));
  const ch = 22;
  const width = Math.max(940, left + cols.length * cw + 190);
  const height = top + ents.length * ch + 60;
  const svg = makeSvg(container, { width, height, title });
  heading(svg, 16, 24, title);
  svg.append('text').attr('x', 16).attr('y', 42).attr('font-size', 12).attr('fill', MUTED)
    .text('Cada celda: documentos que nombran la entidad en esa columna.');
  const x = d3.scaleBand().domain(cols).range([left, left + cols.length * cw]).padding(0.06);
  const y = d3.scaleBand().domain(ents).range([top, top + ents.length * ch]).padding(0.08);
  const { scale, items } = countScale(d3.max(cells, (c) => c.n_documents) || 1, d3.schemePurples);
  svg.append('g').attr('aria-hidden', 'true').selectAll('text').data(cols).join('text')
    .attr('transform', (c) => `translate(${x(c) + x.bandwidth() / 2},${top - 8}) rotate(-40)`)
    .attr('font-size', 11).attr('fill', '#1b1f24').text((c) => {
      const l = sourceLabel(c);
      return l.length > 26 ? `${l.slice(0, 25)}…` : l;
    });
  const rowLabels = svg.append('g').attr('class', 'filas').selectAll('text').data(ents).join('text')
    .attr('x', left - 8).attr('y', (e) => y(e) + y.bandwidth() / 2 + 4).attr('text-anchor', 'end')
    .attr('font-size', 12).attr('fill', (e) => (e === state.entidad ? FOCUS : '#1b1f24'))
    .attr('font-weight', (e) => (e === state.entidad ? 'bold' : 'normal'))
    .attr('data-entidad', (e) => e)
    .attr('aria-label', (e) => `${entityShort(e)} — ${entityName(e)}: seleccionar para filtrar las vistas`)
    .text((e) => entityShort(e));
  activate(rowLabels, (event, e) => {
    const ids = cells.filter((c) => c.entity_id === e).map((c) => c.id);
    ctx.onEntity(e, { vista: 'entity_heatmap', ids });
  });
  const g = svg.append('g').attr('class', 'celdas').selectAll('rect').data(cells).join('rect')
    .attr('x', (c) => x(c.category)).attr('y', (c) => y(c.entity_id))
    .attr('width', x.bandwidth()).attr('height', y.bandwidth())
    .attr('fill', (c) => scale(c.n_documents))
    .attr('data-entidad', (c) => c.entity_id).attr('data-columna', (c) => c.category)
    .attr('aria-label', (c) => `${entityName(c.entity_id)} × ${sourceLabel(c.category)}: ${plural(c.n_documents, 'documento', 'documentos')}`);
  g.append('title').text((c) => `${entityName(c.entity_id)} × ${sourceLabel(c.category)}: ${plural(c.n_documents, 'documento', 'documentos')}, ${plural(c.n_passages, 'pasaje', 'pasajes')}`);
  activate(g, (event, c) => ctx.onRows({
    vista: 'entity_heatmap', ids: [c.id], label: `${entityShort(c.entity_id)} × ${sourceLabel(c.category)}`, counted: [c.entity_id],
  }));
  const dark = new Set(items.map((i) => i.fill).filter((c) => d3.lab(c).l < 60));
  svg.append('g').attr('aria-hidden', 'true').selectAll('text').data(cells).join('text')
    .attr('x', (c) => x(c.category) + x.bandwidth() / 2).attr('y', (c) => y(c.entity_id) + y.bandwidth() / 2 + 4)
    .attr('text-anchor', 'middle').attr('font-size', 11).attr('pointer-events', 'none')
    .attr('fill', (c) => (dark.has(scale(c.n_documents)) ? '#ffffff' : '#1b1f24')).text((c) => num(c.n_documents));
  legend(svg, width - 170, top, 'Documentos', items);
  sourceLine(svg, 16, height - 12, 'agg_entity_heatmap (menciones del diccionario de entidades)');
  return {
    title,
    note: `${plural(ents.length, 'entidad', 'entidades')} × ${plural(cols.length, 'columna', 'columnas')}`
      + (totals.size > ents.length ? ` (las ${num(ents.length)} más nombradas de ${num(totals.size)}).` : '.')
      + (data.narrowed_by.length ? ` Restringida por ${narrowText(data.narrowed_by, state)}.` : ''),
    table: {
      columns: ['Entidad', 'Columna', 'Documentos', 'Pasajes'],
      rows: data.rows.slice().sort((a, b) => b.n_documents - a.n_documents)
        .map((c) => [entityName(c.entity_id), sourceLabel(c.category), num(c.n_documents), num(c.n_passages)]),
    },
    sources: ['agg_entity_heatmap'],
  };
}
