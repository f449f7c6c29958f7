// Co-occurrence network: entities named in the same passage. Layout computed synchronously
// (fixed number of ticks, deterministic start) so the same data always draws the same picture.
import { activate, heading, legend, makeSvg, sourceLine } from './chart.js';
import {
  CATEGORIAS, CATEGORY_COLORS, FOCUS, MUTED, entityName, entityShort, labels, narrowText, num, plural,
} from './format.js';

const MAX_NODES = 32;
const MAX_EDGES = 90; // the strongest links; every link is in the table

export function drawNetwork(container, data, ctx) {
  const { state } = ctx;
  const nodesAll = data.nodes.slice().sort((a, b) => b.n_documents - a.n_documents || a.entity_a.localeCompare(b.entity_a));
  const keep = new Set(nodesAll.slice(0, MAX_NODES).map((n) => n.entity_a));
  if (state.entidad && nodesAll.some((n) => n.entity_a === state.entidad)) keep.add(state.entidad);
  const nodes = nodesAll.filter((n) => keep.has(n.entity_a)).map((n) => ({ ...n, key: n.entity_a }));
  const edgesIn = data.edges.filter((e) => keep.has(e.entity_a) && keep.has(e.entity_b))
    .sort((a, b) => b.n_passages - a.n_passages || a.id - b.id);
  const edges = edgesIn.slice(0, MAX_EDGES).map((e) => ({ ...e, source: e.entity_a, target: e.entity_b }));
  const width = 940;
  const height = 600;
  const title = state.entidad
    ? `Red de coocurrencia en documentos que nombran ${entityName(state.entidad)}`
    : 'Red de coocurrencia de entidades (mismo pasaje)';
  const svg = makeSvg(container, { width, height, title });
  heading(svg, 16, 24, title);
  svg.append('text').attr('x', 16).attr('y', 42).attr('font-size', 12).attr('fill', MUTED)
    .text('Nodo: documentos que nombran la entidad. Enlace: pasajes que nombran a ambas.');
  const cx = (width - 200) / 2;
  const cy = height / 2 + 10;
  const r = d3.scaleSqrt().domain([1, d3.max(nodes, (n) => n.n_documents) || 1]).range([5, 24]);
  nodes.forEach((n, i) => { // deterministic phyllotaxis start
    const a = i * Math.PI * (3 - Math.sqrt(5));
    const rad = 12 * Math.sqrt(i + 0.5);
    n.x = cx + rad * Math.cos(a);
    n.y = cy + rad * Math.sin(a);
  });
  const maxW = d3.max(edges, (e) => e.n_passages) || 1;
  const sim = d3.forceSimulation(nodes)
    .force('link', d3.forceLink(edges).id((d) => d.key).distance((e) => 150 - 70 * Math.sqrt(e.n_passages / maxW))
      .strength(0.25))
    .force('charge', d3.forceManyBody().strength(-520))
    .force('collide', d3.forceCollide().radius((d) => r(d.n_documents) + 18))
    .force('x', d3.forceX(cx).strength(0.05)).force('y', d3.forceY(cy).strength(0.09))
    .stop();
  for (let i = 0; i < 320; i += 1) sim.tick();
  const pad = 30;
  nodes.forEach((n) => {
    n.x = Math.max(pad, Math.min(width - 290, n.x));
    n.y = Math.max(70, Math.min(height - 40, n.y));
  });
  const w = d3.scaleLinear().domain([1, d3.max(edges, (e) => e.n_passages) || 1]).range([1.5, 8]);
  const eg = svg.append('g').attr('class', 'enlaces');
  const lines = eg.selectAll('g').data(edges).join('g');
  lines.append('line').attr('x1', (e) => e.source.x).attr('y1', (e) => e.source.y)
    .attr('x2', (e) => e.target.x).attr('y2', (e) => e.target.y)
    .attr('stroke', '#6b7480').attr('stroke-opacity', (e) => 0.3 + 0.6 * Math.sqrt(e.n_passages / maxW))
    .attr('stroke-width', (e) => w(e.n_passages));
  const hits = lines.append('line').attr('class', 'enlace')
    .attr('x1', (e) => e.source.x).attr('y1', (e) => e.source.y)
    .attr('x2', (e) => e.target.x).attr('y2', (e) => e.target.y)
    .attr('stroke', 'transparent').attr('stroke-width', 12)
    .attr('aria-label', (e) => `${entityName(e.entity_a)} y ${entityName(e.entity_b)}: ${plural(e.n_passages, 'pasaje', 'pasajes')} en común`);
  hits.append('title').text((e) => `${entityShort(e.entity_a)} — ${entityShort(e.entity_b)}: ${plural(e.n_passages, 'pasaje', 'pasajes')}, ${plural(e.n_documents, 'documento', 'documentos')}`);
  activate(hits, (event, e) => ctx.onRows({
    vista: 'entity_network', ids: [e.id], label: `${entityShort(e.entity_a)} y ${entityShort(e.entity_b)} en el mismo pasaje`,
    counted: [e.entity_a, e.entity_b],
  }));
const cat = (n) => (labels.entities[n.key] || {}).category || 'unknown';
  // accessible name = visible label first (WCAG 2.5.3), then the details
  function nodeLabel(n) {
    return `${entityShort(n.key)} — ${entityName(n.key)} (${CATEGORIAS[cat(n)]}): `
      + `${plural(n.n_documents, 'documento', 'documentos')}, ${plural(n.n_passages, 'pasaje', 'pasajes')}`;
  }
  const ng = svg.append('g').attr('class', 'nodos');
  const node = ng.selectAll('g').data(nodes).join('g').attr('transform', (n) => `translate(${n.x},${n.y})`)
    .attr('data-entidad', (n) => n.key)
    .attr('aria-label', (n) => nodeLabel(n));
    node.append('circle').attr('r', (n) => r(n.n_documents)).attr('fill', (n) => CATEGORY_COLORS[cat(n)])
    .attr('stroke', (n) => (n.key === state.entidad ? FOCUS : '#ffffff')).attr('stroke-width', (n) => (n.key === state.entidad ? 4 : 1.5));
  node.append('text').attr('x', (n) => r(n.n_documents) + 4).attr('y', 4).attr('font-size', 11.5)
    .attr('font-weight', (n) => (n.key === state.entidad ? 'bold' : 'normal'))
    .attr('paint-order', 'stroke').attr('stroke', '#ffffff').attr('stroke-width', 3).attr('fill', '#1b1f24')
    .text((n) => entityShort(n.key));
  node.append('title').text(nodeLabel);
  activate(node, (event, n) => ctx.onEntity(n.key, { vista: 'entity_network', ids: [n.id] }));
  const cats = Array.from(new Set(nodes.map(cat)));
  legend(svg, width - 190, 80, 'Categoría', cats.map((c) => ({ fill: CATEGORY_COLORS[c], label: CATEGORIAS[c] || c })));
  svg.append('text').attr('x', width - 190).attr('y', 110 + cats.length * 20).attr('font-size', 11).attr('fill', MUTED)
    .selectAll('tspan').data(['Tamaño: documentos', 'Grosor: pasajes en común'])
    .join('tspan').attr('x', width - 190).attr('dy', (d, i) => (i ? 14 : 0)).text((d) => d);
  sourceLine(svg, 16, height - 10, 'agg_entity_network (menciones del diccionario de entidades, mismo pasaje)');
  const hidden = nodesAll.length - nodes.length;
  return {
    title,
    note: `${plural(nodes.length, 'entidad', 'entidades')}, ${plural(edges.length, 'enlace', 'enlaces')}`
      + (edgesIn.length > edges.length ? ` (los ${num(edges.length)} más fuertes de ${num(edgesIn.length)})` : '')
      + (hidden > 0 ? ` (se muestran las ${num(MAX_NODES)} más nombradas; ${num(hidden)} más en la tabla).` : '.')
      + (data.narrowed_by.length ? ` Restringida por ${narrowText(data.narrowed_by, state)}.` : ''),
    table: {
      columns: ['Entidad', 'Otra entidad', 'Documentos', 'Pasajes'],
      rows: [...nodesAll.map((n) => [entityName(n.entity_a), '—', num(n.n_documents), num(n.n_passages)]),
        ...data.edges.slice().sort((a, b) => b.n_passages - a.n_passages)
          .map((e) => [entityName(e.entity_a), entityName(e.entity_b), num(e.n_documents), num(e.n_passages)])],
    },
    sources: ['agg_entity_network'],
  };
}
