// Share: a PNG of the current view with its filters, legend and sources. The view's SVG already
// holds its legend and source line; a header (title, filters, link) and a footer (sources) are
// added around it, and the whole is rasterised on a canvas — no server, no external service.
import { FONT, INK, MUTED } from './format.js';

function wrap(text, max) {
  const words = text.split(/\s+/);
  const lines = [];
  let cur = '';
  for (const w of words) {
    if ((`${cur} ${w}`).trim().length > max) { lines.push(cur); cur = w; } else cur = `${cur} ${w}`.trim();
  }
  if (cur) lines.push(cur);
  return lines;
}

export async function exportPng({ svgNode, title, filters, sources, url, filename }) {
  const vb = svgNode.viewBox.baseVal;
  const w = Math.max(vb.width, 760);
  const titleLines = wrap(`Radar — ${title}`, Math.floor(w / 10.5));
  const headerLines = [...wrap(`Filtros: ${filters}`, Math.floor(w / 7.6)), ...wrap(`Vista compartida: ${url}`, Math.floor(w / 7.6))];
  const footerLines = wrap(`Fuentes: ${sources.join(' · ')}. Cada cifra remite a los pasajes (doc_id, chunk_id) que cuenta.`, Math.floor(w / 7));
  const header = 20 + titleLines.length * 22 + headerLines.length * 18 + 8;
  const footer = 16 + footerLines.length * 16;
  const h = header + vb.height + footer;
  const NS = 'http://www.w3.org/2000/svg';
  const out = document.createElementNS(NS, 'svg');
  out.setAttribute('xmlns', NS);
  out.setAttribute('width', w);
  out.setAttribute('height', h);
  out.setAttribute('viewBox', `0 0 ${w} ${h}`);
  out.setAttribute('font-family', FONT);
  const bg = document.createElementNS(NS, 'rect');
  bg.setAttribute('width', w); bg.setAttribute('height', h); bg.setAttribute('fill', '#ffffff');
  out.appendChild(bg);
  const text = (x, y, s, size, color, weight) => {
    const t = document.createElementNS(NS, 'text');
    t.setAttribute('x', x); t.setAttribute('y', y); t.setAttribute('font-size', size); t.setAttribute('fill', color);
    if (weight) t.setAttribute('font-weight', weight);
    t.textContent = s;
    out.appendChild(t);
  };
  titleLines.forEach((l, i) => text(16, 26 + i * 22, l, 17, INK, 'bold'));
  headerLines.forEach((l, i) => text(16, 26 + titleLines.length * 22 + i * 18, l, 12.5, INK));
  const clone = svgNode.cloneNode(true);
  clone.setAttribute('x', 0);
  clone.setAttribute('y', header);
  clone.setAttribute('width', vb.width);
  clone.setAttribute('height', vb.height);
  clone.querySelectorAll('[tabindex]').forEach((n) => n.removeAttribute('tabindex'));
  out.appendChild(clone);
  footerLines.forEach((l, i) => text(16, header + vb.height + 14 + i * 16, l, 11.5, MUTED));
  const xml = new XMLSerializer().serializeToString(out);
  const blobUrl = URL.createObjectURL(new Blob([xml], { type: 'image/svg+xml;charset=utf-8' }));
  try {
    const img = new Image();
    img.decoding = 'sync';
    await new Promise((resolve, reject) => { img.onload = resolve; img.onerror = () => reject(new Error('no pude dibujar la vista')); img.src = blobUrl; });
    const scale = 2;
    const canvas = document.createElement('canvas');
    canvas.width = Math.round(w * scale);
    canvas.height = Math.round(h * scale);
    const c2d = canvas.getContext('2d');
    c2d.scale(scale, scale);
    c2d.drawImage(img, 0, 0, w, h);
    const blob = await new Promise((resolve) => canvas.toBlob(resolve, 'image/png'));
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = filename;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
    return { width: canvas.width, height: canvas.height, bytes: blob.size };
  } finally {
    URL.revokeObjectURL(blobUrl);
  }
}
