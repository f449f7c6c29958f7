// Timeline: dated documents per year or month; the undated count is stated in the header.
import { activate, heading, makeSvg, sourceLine } from './chart.js';
import {
  MUTED, entityName, narrowText, num, periodLabel, placeName, plural,
} from './format.js';

function fillPeriods(rows, gran) {
  if (!rows.length) return [];
  const by = new Map(rows.map((r) => [r.period, r]));
  const first = rows[0].period;
  const last = rows[rows.length - 1].period;
  const out = [];
  if (gran === 'year') {
    for (let y = Number(first); y <= Number(last); y += 1) out.push(by.get(String(y)) || { period: String(y), n_documents: 0 });
  } else {
    let [y, m] = first.split('-').map(Number);
    const [ly, lm] = last.split('-').map(Number);
    while (y < ly || (y === ly && m <= lm)) {
      const p = `${y}-${String(m).padStart(2, '0')}`;
      out.push(by.get(p) || { period: p, n_documents: 0 });
      m += 1;
      if (m > 12) { m = 1; y += 1; }
      if (out.length > 1200) break;
    }
  }
  return out;
}

export function drawTimeline(container, data, ctx) {
  const { state } = ctx;
  const gran = data.granularity;
  const rows = fillPeriods(data.rows, gran);
  const undated = data.undated ? data.undated.n_documents : 0;
  const subject = state.entidad ? `que nombran ${entityName(state.entidad)}` : '';
  const title = `Documentos con fecha por ${gran === 'year' ? 'año' : 'mes'} ${subject}`.trim()
    + ` — ${plural(undated, 'documento sin fecha queda', 'documentos sin fecha quedan')} fuera de la serie`;
  const width = 940;
  const height = 460;
  const m = { top: 70, right: 20, bottom: 70, left: 56 };
  const svg = makeSvg(container, { width, height, title });
  heading(svg, 16, 24, `Documentos con fecha por ${gran === 'year' ? 'año' : 'mes'} ${subject}`.trim());
  svg.append('text').attr('class', 'sin-fecha').attr('x', 16).attr('y', 44).attr('font-size', 13).attr('fill', '#1b1f24')
    .text(`Sin fecha: ${plural(undated, 'documento', 'documentos')} (no entran en la serie; la fecha sale solo de los metadatos de origen).`);
  const x = d3.scaleBand().domain(rows.map((r) => r.period)).range([m.left, width - m.right]).padding(0.15);
  const ymax = d3.max(rows, (r) => r.n_documents) || 1;
  const y = d3.scaleLinear().domain([0, ymax]).nice().range([height - m.bottom, m.top]);
  const yAxis = d3.axisLeft(y).ticks(Math.min(6, ymax)).tickFormat((v) => (Number.isInteger(v) ? num(v) : ''));
  svg.append('g').attr('transform', `translate(${m.left},0)`).attr('aria-hidden', 'true').call(yAxis)
    .call((g) => g.selectAll('text').attr('font-size', 11).attr('fill', '#1b1f24'));
  const every = Math.ceil(rows.length / 24);
  const xAxis = d3.axisBottom(x).tickValues(rows.map((r) => r.period).filter((p, i) => i % every === 0)).tickFormat(periodLabel);
  svg.append('g').attr('transform', `translate(0,${height - m.bottom})`).attr('aria-hidden', 'true').call(xAxis)
    .call((g) => g.selectAll('text').attr('font-size', 11).attr('fill', '#1b1f24')
      .attr('transform', rows.length > 12 ? 'rotate(-40)' : null).attr('text-anchor', rows.length > 12 ? 'end' : 'middle'));
  svg.append('text').attr('transform', `translate(16,${(height - m.bottom + m.top) / 2}) rotate(-90)`)
    .attr('text-anchor', 'middle').attr('font-size', 12).attr('fill', MUTED).text('documentos');
  const bars = svg.append('g').attr('class', 'barras').selectAll('rect').data(rows.filter((r) => r.n_documents > 0)).join('rect')
    .attr('x', (r) => x(r.period)).attr('width', x.bandwidth())
    .attr('y', (r) => y(r.n_documents)).attr('height', (r) => y(0) - y(r.n_documents))
    .attr('fill', '#1f5fa8')
    .attr('data-periodo', (r) => r.period)
    .attr('aria-label', (r) => `${periodLabel(r.period)}: ${plural(r.n_documents, 'documento', 'documentos')}`);
  bars.append('title').text((r) => `${periodLabel(r.period)}: ${plural(r.n_documents, 'documento', 'documentos')}`);
  activate(bars, (event, r) => ctx.onRows({
    vista: 'timeline', ids: [r.id], label: `${periodLabel(r.period)} — ${plural(r.n_documents, 'documento', 'documentos')}`,
  }));
  if (rows.length <= 40) {
    svg.append('g').attr('aria-hidden', 'true').selectAll('text').data(rows.filter((r) => r.n_documents > 0)).join('text')
      .attr('x', (r) => x(r.period) + x.bandwidth() / 2).attr('y', (r) => y(r.n_documents) - 4)
      .attr('text-anchor', 'middle').attr('font-size', 11).text((r) => num(r.n_documents));
  }
  sourceLine(svg, 16, height - 10, 'agg_timeline (fechas de publicación por reglas sobre nombre de archivo y carpeta)');
  const notes = [];
  if (data.narrowed_by.length) notes.push(`Serie restringida por ${narrowText(data.narrowed_by, state)}.`);
  if (state.lugar && data.narrowed_by.includes('lugar')) notes.push(`Documentos que nombran ${placeName(state.lugar)}.`);
  return {
    title,
    note: `${plural(d3.sum(rows, (r) => r.n_documents), 'documento con fecha', 'documentos con fecha')} en la serie. ${notes.join(' ')}`,
    table: {
      columns: ['Periodo', 'Documentos'],
      rows: [...rows.filter((r) => r.n_documents > 0).map((r) => [periodLabel(r.period), num(r.n_documents)]), ['Sin fecha', num(undated)]],
    },
    sources: ['agg_timeline'],
    undated,
  };
}
