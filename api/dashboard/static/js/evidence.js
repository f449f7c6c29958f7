// Evidence panel: the passages behind the current selection (doc_id, chunk_id, source, page).
// Opening one shows a window of ~80 passages of its document centred on the cited passage, with
// the mentions the figure counts highlighted (<mark class="contada">) and other dictionary
// mentions underlined. Offsets from the precomputes are Python string indices (code points).
import { apiFetch } from './auth.js';
import { escapeHtml, narrowText, num, plural } from './format.js';

const WINDOW = 80;
const $ = (id) => document.getElementById(id);

async function getJSON(url) {
  const r = await apiFetch(url);
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error((body.error && body.error.message) || (body.detail && body.detail.message) || `HTTP ${r.status}`);
  return body;
}

function reasonText(reason) {
  if (reason === 'beyond_tabular_cap') return 'el registro está más allá del tope de pasajes por archivo tabular: no tiene pasaje citable';
  return 'el registro no cabe en un solo pasaje';
}

export class EvidencePanel {
  constructor() {
    this.list = $('ev-lista');
    this.label = $('ev-seleccion');
    this.more = $('ev-mas');
    this.win = $('ev-ventana');
    this.doc = $('ev-doc');
    this.passages = $('ev-pasajes');
    this.token = 0;
    this.claimsToken = 0;
    this.counted = { entities: [], places: [], quotes: [] };
    $('ev-volver').addEventListener('click', () => this.closeWindow());
  }

  clear(message) {
    this.token += 1;
    this.list.replaceChildren();
    this.more.replaceChildren();
    this.closeWindow(false);
    this.label.textContent = message || 'Seleccione un territorio, una barra, una celda o una entidad para ver los pasajes que la cuentan.';
    this.current = null;
  }

  async show(sel, filters, { openFirst = false } = {}) {
    const token = ++this.token;
    this.current = sel;
    this.closeWindow(false);
    this.label.textContent = `Cargando la evidencia de ${sel.label}…`;
    const q = new URLSearchParams(filters);
    q.set('vista', sel.vista);
    q.set('ids', sel.ids.slice(0, 200).join(','));
    let data;
    try {
      data = await getJSON(`/tablero/api/evidencia?${q}`);
    } catch (e) {
      if (token === this.token) this.label.textContent = `No pude leer la evidencia: ${e.message}`;
      return null;
    }
    if (token !== this.token) return null;
    if (data.materialized === false) {
      this.label.textContent = data.message;
      return null;
    }
    this.counted = data.counted;
    if (sel.counted) this.counted = { ...this.counted, entities: Array.from(new Set([...this.counted.entities, ...sel.counted])) };
    this.filters = filters;
    this.label.textContent = `${sel.label}: ${plural(data.total, 'pasaje', 'pasajes')} de ${plural(data.n_documents, 'documento', 'documentos')}`
      + (data.narrowed_by.length ? ` (restringido por ${narrowText(data.narrowed_by, data.filters)})` : '') + '.';
    this.list.replaceChildren();
    this.append(data.items);
    this.renderMore(data, sel, filters);
    if (openFirst) {
      const first = data.items.find((i) => i.chunk_id);
      if (first) await this.openWindow(first.doc_id, first.chunk_id);
    }
    return data;
  }

  append(items) {
    for (const it of items) {
      const li = document.createElement('li');
      li.dataset.chunk = it.chunk_id || '';
      li.dataset.doc = it.doc_id || '';
      const page = it.page_start ? ` · pág. ${it.page_start}${it.page_end && it.page_end !== it.page_start ? `–${it.page_end}` : ''}` : '';
      const src = `<span class="src">${escapeHtml(it.source_path || '')}${page}</span>`;
      if (it.chunk_id) {
        li.innerHTML = `<button type="button" class="abrir ids" aria-label="Abrir el pasaje ${escapeHtml(it.chunk_id)} en su documento">`
          + `${escapeHtml(it.doc_id)} · ${escapeHtml(it.chunk_id)}</button> ${src}`
          + `<p class="snippet">${escapeHtml((it.snippet || '').slice(0, 260))}${(it.snippet || '').length > 260 ? '…' : ''}</p>`;
        li.querySelector('button').addEventListener('click', () => this.openWindow(it.doc_id, it.chunk_id));
      } else {
        li.innerHTML = `<span class="ids">${escapeHtml(it.doc_id)} · sin pasaje</span> ${src}`
          + `<p class="snippet">${escapeHtml(it.quote || '')}</p><span class="why">Sin pasaje citable: ${escapeHtml(reasonText(it.reason))}.</span>`;
      }
      if (it.rows && it.rows.length) {
        const why = document.createElement('span');
        why.className = 'why';
        why.textContent = ` Cuenta para: ${it.rows.join('; ')}`;
        li.appendChild(why);
      }
      this.list.appendChild(li);
    }
  }

  renderMore(data, sel, filters) {
    this.more.replaceChildren();
    const shown = data.offset + data.items.length;
    if (shown >= data.total) return;
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = `Ver más pasajes (${num(data.total - shown)} restantes)`;
    b.addEventListener('click', async () => {
      const q = new URLSearchParams(filters);
      q.set('vista', sel.vista);
      q.set('ids', sel.ids.slice(0, 200).join(','));
      q.set('offset', shown);
      const next = await getJSON(`/tablero/api/evidencia?${q}`);
      this.append(next.items);
      this.renderMore(next, sel, filters);
    });
    this.more.appendChild(b);
  }

  // Claims about the selected place or entity (GET /claims): status, and the passages that support
  // and contradict each one; a contested claim shows both sides and which prevails and why.
  async showClaims(params, label) {
    const box = $('ev-afirmaciones');
    const token = ++this.claimsToken;
    if (!params) { box.hidden = true; box.replaceChildren(); return; }
    let data;
    try {
      data = await getJSON(`/claims?${new URLSearchParams({ ...params, limit: 20 })}`);
    } catch (e) {
      box.hidden = true;
      return;
    }
    if (token !== this.claimsToken) return;
    if (data.materialized === false) { box.hidden = true; return; }
    box.hidden = false;
    if (!data.claims.length) {
      box.innerHTML = `<h3>Afirmaciones</h3><p class="why">Radar no registra afirmaciones sobre ${escapeHtml(label)}.</p>`;
      return;
    }
    const ESTADO = { asserted: 'afirmada', contested: 'disputada', superseded: 'reemplazada', retracted: 'retirada' };
    const POSTURA = { supports: 'la respalda', contradicts: 'la contradice' };
    const parts = [`<h3>Afirmaciones sobre ${escapeHtml(label)}</h3><ul class="claims">`];
    for (const c of data.claims) {
      const period = c.valid_from ? `${c.valid_from}${c.valid_to ? ` a ${c.valid_to}` : ' en adelante'}` : 'validez no indicada por la fuente';
      const prevails = c.status === 'contested'
        ? ` <span class="why">Prevalece: ${c.prevailing_stance ? escapeHtml(POSTURA[c.prevailing_stance]) : 'ninguna (empate)'} (regla: ${escapeHtml(c.policy)}).</span>` : '';
      parts.push(`<li data-claim="${escapeHtml(c.claim_id)}"><span class="estado estado-${escapeHtml(c.status)}">${escapeHtml(ESTADO[c.status] || c.status)}</span> `
        + `${escapeHtml(c.statement)} <span class="why">(${escapeHtml(period)}; registrada ${escapeHtml(c.recorded_at.slice(0, 10))})</span>${prevails}<ul>`);
      for (const e of c.evidence) {
        parts.push(`<li class="postura-${escapeHtml(e.stance)}"><button type="button" class="abrir ids" data-doc="${escapeHtml(e.doc_id)}" data-chunk="${escapeHtml(e.chunk_id)}">`
          + `${e.stance === 'supports' ? 'Respalda' : 'Contradice'} · ${escapeHtml(e.chunk_id)}</button>${e.retracted ? ' <span class="why">(documento retirado)</span>' : ''}`
          + `<p class="snippet">«${escapeHtml(e.span.slice(0, 240))}${e.span.length > 240 ? '…' : ''}»</p></li>`);
      }
      parts.push('</ul></li>');
    }
    parts.push('</ul>');
    box.innerHTML = parts.join('');
    for (const b of box.querySelectorAll('button[data-chunk]')) {
      b.addEventListener('click', () => this.openWindow(b.dataset.doc, b.dataset.chunk));
    }
  }

  closeWindow(focusList = true) {
    this.win.hidden = true;
    this.passages.replaceChildren();
    if (focusList && this.lastButton) this.lastButton.focus();
  }

  // A citation from the chat: open its document at the passage, no figure behind it.
  async openCitation(docId, chunkId, label) {
    this.token += 1;
    this.current = null;
    this.counted = { entities: [], places: [], quotes: [] };
    this.list.replaceChildren();
    this.more.replaceChildren();
    this.label.textContent = label;
    await this.openWindow(docId, chunkId);
  }

  async openWindow(docId, chunkId) {
    this.lastButton = document.activeElement;
    let data;
    try {
      data = await getJSON(`/documents/${encodeURIComponent(docId)}/window?chunk_id=${encodeURIComponent(chunkId)}&size=${WINDOW}`);
    } catch (e) {
      this.win.hidden = false;
      this.doc.innerHTML = `<p class="error">No pude abrir el documento: ${escapeHtml(e.message)}</p>`;
      return;
    }
    const first = data.first_position + 1;
    const last = data.first_position + data.passages.length;
    this.doc.innerHTML = `<p><strong>${escapeHtml(data.title || data.source_path)}</strong></p>`
      + `<p>${escapeHtml(data.source_path)} · doc_id ${escapeHtml(data.doc_id)}</p>`
      + `<p>Pasajes ${num(first)}–${num(last)} de ${num(data.n_passages)}, centrados en ${escapeHtml(data.chunk_id)}. `
      + '<mark class="contada">Resaltado</mark>: mención contada; <span class="mencion">subrayado</span>: otras menciones del diccionario.</p>';
    const byChunk = {};
    for (const [table, rows] of Object.entries(data.mentions || {})) {
      for (const m of rows) (byChunk[m.chunk_id] ||= []).push({ ...m, table });
    }
    const ol = this.passages;
    ol.replaceChildren();
    ol.start = first;
    let target = null;
    for (const p of data.passages) {
      const li = document.createElement('li');
      li.dataset.chunk = p.chunk_id;
      li.id = `pasaje-${p.chunk_id}`;
      if (p.is_target) { li.className = 'target'; li.setAttribute('aria-current', 'true'); target = li; }
      const page = p.page ? ` · pág. ${p.page}` : '';
      li.innerHTML = `<span class="pid">${escapeHtml(p.chunk_id)}${page}${p.is_target ? ' · pasaje citado' : ''}</span>`
        + this.highlight(p.text, byChunk[p.chunk_id] || []);
      ol.appendChild(li);
    }
    this.win.hidden = false;
    if (target) ol.scrollTop = Math.max(0, target.offsetTop - ol.offsetTop - 60);
    ol.focus({ preventScroll: true });
    this.win.scrollIntoView({ block: 'nearest' });
  }

  isCounted(m) {
    const c = this.counted;
    if (m.table === 'entity_mentions') return c.entities.includes(m.entity_id);
    if (m.table === 'place_mentions' && m.place_id) {
      return c.places.some((p) => m.place_id === p.place_id
        || (p.level === 'department' && m.department_code === p.code)
        || (p.level === 'country' && m.country_code === p.code));
    }
    return false;
  }

  highlight(text, mentions) {
    const cps = Array.from(text);
    const spans = [];
    for (const m of mentions) {
      if (!Number.isInteger(m.char_start) || !Number.isInteger(m.char_end)) continue;
      let s = m.char_start;
      let e = m.char_end;
      if (cps.slice(s, e).join('') !== m.matched) { // text differs from the precompute's: locate it
        const at = text.indexOf(m.matched);
        if (at < 0) continue;
        s = Array.from(text.slice(0, at)).length;
        e = s + Array.from(m.matched).length;
      }
      spans.push({ s, e, counted: this.isCounted(m), label: m.entity_id || m.place_id || '' });
    }
    for (const quote of this.counted.quotes || []) {
      const rx = new RegExp(quote.trim().split(/\s+/).map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('\\s+'));
      const hit = rx.exec(text);
      if (hit) {
        const s = Array.from(text.slice(0, hit.index)).length;
        spans.push({ s, e: s + Array.from(hit[0]).length, counted: true, label: 'registro' });
      }
    }
    spans.sort((a, b) => a.s - b.s || (b.counted - a.counted) || (b.e - a.e));
    let out = '';
    let pos = 0;
    for (const sp of spans) {
      if (sp.s < pos) continue;
      out += escapeHtml(cps.slice(pos, sp.s).join(''));
      const inner = escapeHtml(cps.slice(sp.s, sp.e).join(''));
      out += sp.counted
        ? `<mark class="contada" data-id="${escapeHtml(sp.label)}">${inner}</mark>`
        : `<span class="mencion" data-id="${escapeHtml(sp.label)}">${inner}</span>`;
      pos = sp.e;
    }
    out += escapeHtml(cps.slice(pos).join(''));
    return `<span class="texto">${out}</span>`;
  }
}
