// SVG helpers shared by the views. Styles are presentation attributes (not CSS) so that the
// exported PNG looks exactly like the screen: legend and source are drawn inside each SVG.
import { FONT, INK, MUTED, num } from './format.js';

let uid = 0;

export function makeSvg(container, { width, height, title }) {
  uid += 1;
  const id = `grafico-${uid}`;
  const svg = d3.select(container).append('svg')
    .attr('xmlns', 'http://www.w3.org/2000/svg')
    .attr('viewBox', `0 0 ${width} ${height}`)
    .attr('width', width).attr('height', height)
    .attr('role', 'group').attr('aria-labelledby', `${id}-t`)
    .attr('font-family', FONT).attr('font-size', 12).attr('fill', INK);
  svg.append('title').attr('id', `${id}-t`).text(title);
  svg.append('rect').attr('width', width).attr('height', height).attr('fill', '#ffffff').attr('aria-hidden', 'true');
  return svg;
}

export function heading(svg, x, y, text, size = 14) {
  return svg.append('text').attr('x', x).attr('y', y).attr('font-size', size).attr('font-weight', 'bold')
    .attr('fill', INK).attr('aria-hidden', 'true').text(text);
}

export function sourceLine(svg, x, y, text) {
  return svg.append('text').attr('class', 'fuente').attr('x', x).attr('y', y).attr('font-size', 11)
    .attr('fill', MUTED).text(`Fuente: ${text}`);
}

// items: [{fill, label, stroke?, dash?, lines?}] stacked vertically; ``lines``: further lines of
// the label (a long name). Returns the group; its ``bottom`` property is the y below the last row.
export function legend(svg, x, y, title, items) {
  const g = svg.append('g').attr('class', 'leyenda').attr('transform', `translate(${x},${y})`);
  g.append('text').attr('font-weight', 'bold').attr('font-size', 12).attr('fill', INK).text(title);
  let top = 12;
  items.forEach((it) => {
    const row = g.append('g').attr('transform', `translate(0,${top})`);
    row.append('rect').attr('width', 16).attr('height', 14).attr('rx', 2)
      .attr('fill', it.fill).attr('stroke', it.stroke || '#7a8594').attr('stroke-width', it.strokeWidth || 1)
      .attr('stroke-dasharray', it.dash || null);
    const text = row.append('text').attr('x', 22).attr('y', 11.5).attr('font-size', 12).attr('fill', INK).text(it.label);
    for (const line of it.lines || []) text.append('tspan').attr('x', 22).attr('dy', 14).text(line);
    top += 20 + 14 * (it.lines || []).length;
  });
  g.bottom = y + top;
  return g;
}

// Classes for counts: integer steps when small, nice thresholds otherwise.
export function countScale(max, scheme) {
  const top = Math.max(1, max || 0);
  let thresholds;
  if (top <= 5) thresholds = d3.range(2, top + 1);
  else if (top <= 20) {
    const t = d3.ticks(0, top, 4).filter((v) => v > 1 && v <= top);
    thresholds = Array.from(new Set([2, ...t.map(Math.ceil)])).sort((a, b) => a - b);
  } else { // skewed counts (a few places named everywhere): 1-2-5 steps on a log scale
    thresholds = [2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000].filter((v) => v <= top);
    while (thresholds.length > 6) thresholds = thresholds.filter((v, i) => i === 0 || i === thresholds.length - 1 || i % 2 === 0);
  }
  const k = thresholds.length + 1;
  // the lightest shade of each scheme is skipped: it must not be confused with "none" (zero)
  const colors = scheme[Math.min(9, Math.max(3, k + 1))].slice(-k);
  const scale = d3.scaleThreshold().domain(thresholds).range(colors);
  const items = colors.map((c, i) => {
    const lo = i === 0 ? 1 : thresholds[i - 1];
    const hi = i < thresholds.length ? thresholds[i] - 1 : top;
    return { fill: c, label: lo === hi ? num(lo) : `${num(lo)}–${num(hi)}` };
  });
  return { scale, items };
}

export function activate(sel, handler) {
  return sel.attr('tabindex', 0).attr('role', 'button')
    .on('click', (event, d) => handler(event, d))
    .on('keydown', (event, d) => {
      if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); handler(event, d); }
    });
}

export function empty(container, text) {
  d3.select(container).append('p').attr('class', 'empty').text(text);
}

export function hatch(svg, id) {
  const defs = svg.select('defs').empty() ? svg.insert('defs', ':first-child') : svg.select('defs');
  const p = defs.append('pattern').attr('id', id).attr('patternUnits', 'userSpaceOnUse')
    .attr('width', 6).attr('height', 6).attr('patternTransform', 'rotate(45)');
  p.append('rect').attr('width', 6).attr('height', 6).attr('fill', '#ffffff');
  p.append('line').attr('x1', 0).attr('y1', 0).attr('x2', 0).attr('y2', 6).attr('stroke', '#4a5360').attr('stroke-width', 2);
  return `url(#${id})`;
}
