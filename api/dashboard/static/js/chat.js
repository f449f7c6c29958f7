// Chat beside the views: POST /chat/stream (Server-Sent Events). Each finished step of the agent
// arrives as `event: step` and is shown at once (roles in order, state, tool, time, tokens);
// `event: final` carries the full answer: text with linked citations, the sources cited and the
// passages read, model and token use, tool results, and — when the question asked to *see*
// something — the components and filters the agent chose, which then drive the views. A past answer
// reopened by its link (`#respuesta=<run_id>`) says which of its citations a later materialization
// superseded or retracted, and what replaced them.
import { apiFetch } from './auth.js';
import { escapeHtml, num, plural } from './format.js';

const ROLES = {
  guardia_entrada: 'guardia de entrada', orquestador: 'orquestador', analista: 'analista', visualizador: 'visualizador',
  verificador: 'verificador', guardia_salida: 'guardia de salida', redactor: 'redactor', sistema: 'sistema',
};
const ESTADOS = {
  respondida: 'respondida', sin_evidencia: 'sin evidencia', no_verificada: 'no verificada', incompleta: 'incompleta',
  bloqueada: 'bloqueada', error: 'error',
};
const CITE = /\[([0-9a-f]{16})\s*:\s*([0-9a-f]{16}-[0-9]{1,6})\]/g;

export function parseSSE(buffer, onEvent) {
  const parts = buffer.split('\n\n');
  const rest = parts.pop();
  for (const part of parts) {
    let name = 'message';
    const data = [];
    for (const line of part.split('\n')) {
      if (line.startsWith('event:')) name = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length) onEvent(name, JSON.parse(data.join('\n')));
  }
  return rest;
}

export class Chat {
  constructor({ meta, onVisualization, onCitation }) {
    this.log = document.getElementById('chat-log');
    this.form = document.getElementById('chat-form');
    this.input = document.getElementById('pregunta');
    this.button = document.getElementById('preguntar');
    this.onVisualization = onVisualization;
    this.onCitation = onCitation;
    this.conversation = null;
    this.meta = meta;
    const modelo = meta.modo === 'llm'
      ? `modelo ${meta.modelo.grande}${meta.modelo.pequeno && meta.modelo.pequeno !== meta.modelo.grande ? ` / ${meta.modelo.pequeno}` : ''}`
      : 'modo sin modelo de lenguaje (reglas y redactor extractivo)';
    this.modelText = modelo;
    document.getElementById('chat-modo').textContent = `Agente: ${modelo}. Cada afirmación cita [doc_id:chunk_id].`;
    this.form.addEventListener('submit', (e) => { e.preventDefault(); this.ask(this.input.value.trim()); });
    this.input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); this.ask(this.input.value.trim()); }
    });
  }

  async ask(question) {
    if (!question || this.busy) return;
    this.busy = true;
    this.button.disabled = true;
    const box = document.createElement('article');
    box.className = 'turno';
    box.innerHTML = `<p class="q">${escapeHtml(question)}</p><h3>Razonamiento visible</h3><ol class="steps" aria-label="Pasos del agente"></ol>`
      + '<div class="final" aria-live="polite"><p class="meta">Pensando…</p></div>';
    this.log.appendChild(box);
    this.log.scrollTop = this.log.scrollHeight;
    const steps = box.querySelector('.steps');
    const final = box.querySelector('.final');
    try {
      const res = await apiFetch('/chat/stream', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
        body: JSON.stringify(this.conversation ? { pregunta: question, conversacion_id: this.conversation } : { pregunta: question }),
      });
      if (!res.ok || !res.body) {
        const body = await res.json().catch(() => null);
        if (body && body.respuesta) { this.renderFinal(final, body); return; }
        throw new Error(`HTTP ${res.status}`);
      }
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        buffer = parseSSE(buffer, (name, data) => {
          if (name === 'step') this.renderStep(steps, data);
          else if (name === 'final') this.renderFinal(final, data);
        });
        this.log.scrollTop = this.log.scrollHeight;
      }
    } catch (e) {
      final.innerHTML = `<p class="error">No pude hablar con el agente: ${escapeHtml(e.message)}</p>`;
    } finally {
      this.busy = false;
      this.button.disabled = false;
      this.input.value = '';
    }
  }

  // A past answer reopened (the page's `#respuesta=<run_id>`): GET /runs/{id} returns the answer as it
  // was sent and `vigencia`, whether a later materialization closed a passage it cites.
  async reopen(runId) {
    if (!/^[0-9a-f]{8,64}$/.test(runId || '')) return;
    const box = document.createElement('article');
    box.className = 'turno reabierta';
    box.dataset.run = runId;
    box.innerHTML = '<p class="q"></p><div class="final" aria-live="polite"><p class="meta">Reabriendo la respuesta…</p></div>';
    this.log.appendChild(box);
    const final = box.querySelector('.final');
    try {
      const res = await apiFetch(`/runs/${runId}`);
      const body = await res.json().catch(() => null);
      if (!res.ok || !body) {
        const err = body && ((body.error && body.error.message) || (body.detail && body.detail.message));
        throw new Error(err || `HTTP ${res.status}`);
      }
      box.querySelector('.q').textContent = body.pregunta;
      this.renderFinal(final, body.respuesta, body.vigencia);
    } catch (e) {
      final.innerHTML = `<p class="error">No pude reabrir la respuesta ${escapeHtml(runId)}: ${escapeHtml(e.message)}</p>`;
    }
  }

  renderValidity(v) {
    if (!v) return '';
    if (v.estado !== 'desactualizada') {
      return '<p class="vigencia" data-vigencia="vigente">Respuesta reabierta: todas sus citas siguen vigentes.</p>';
    }
    const day = (iso) => escapeHtml(String(iso || '').slice(0, 10));
    const items = v.citas_no_vigentes.map((c) => {
      const cita = `[${c.n ?? '?'}] <span class="ids">${escapeHtml(c.chunk_id)}</span>`;
      let what;
      if (c.motivo === 'retracted') {
        what = `fue retractada el ${day(c.superseded_at)}${c.retraction_reason ? `: ${escapeHtml(c.retraction_reason)}` : ''}`;
      } else if (c.reemplazo) {
        const r = c.reemplazo;
        what = `fue reemplazada el ${day(c.superseded_at)} (${escapeHtml(c.supersede_reason)}) por `
          + `<a href="#pasaje-${escapeHtml(r.chunk_id)}" class="cita" data-doc="${escapeHtml(r.doc_id)}" data-chunk="${escapeHtml(r.chunk_id)}">${escapeHtml(r.chunk_id)}</a>`
          + (r.texto_cambiado ? ', con otro texto' : ', con el mismo texto');
      } else {
        what = `dejó de estar vigente el ${day(c.superseded_at)} (${escapeHtml(c.supersede_reason)}), sin reemplazo`;
      }
      return `<li data-chunk="${escapeHtml(c.chunk_id)}" data-motivo="${escapeHtml(c.motivo)}">La cita ${cita} ${what}.</li>`;
    }).join('');
    return `<div class="vigencia" role="status" data-vigencia="desactualizada"><p><strong>⚠ Respuesta desactualizada</strong>: `
      + `${plural(v.citas_no_vigentes.length, 'cita ya no está vigente', 'citas ya no están vigentes')}.</p><ul>${items}</ul></div>`;
  }

  renderStep(ol, s) {
    const li = document.createElement('li');
    li.className = 'paso';
    li.dataset.rol = s.role;
    const bits = [`<strong>${escapeHtml(ROLES[s.role] || s.role)}</strong>`, escapeHtml(s.state)];
    if (s.tool) bits.push(`herramienta <code>${escapeHtml(s.tool)}</code>`);
    if (s.result_size !== null && s.result_size !== undefined) bits.push(`resultado ${num(s.result_size)} caracteres`);
    bits.push(`${num(Math.round(s.ms))} ms`);
    if (s.tokens_input || s.tokens_output) bits.push(`tokens ${num(s.tokens_input)} + ${num(s.tokens_output)}`);
    if (s.termination_reason) bits.push(`fin: ${escapeHtml(s.termination_reason)}`);
    if (s.rejected_citations && s.rejected_citations.length) bits.push(`citas rechazadas: ${num(s.rejected_citations.length)}`);
    li.innerHTML = bits.join(' · ');
    ol.appendChild(li);
  }

  renderFinal(el, r, vigencia = null) {
    this.conversation = r.conversacion_id || this.conversation;
    const md = r.metadata;
    const byKey = new Map(r.citas.map((c) => [`${c.doc_id}:${c.chunk_id}`, c]));
    let n = r.citas.length;
    const text = escapeHtml(r.respuesta).replace(CITE, (all, doc, chunk) => {
      let c = byKey.get(`${doc}:${chunk}`);
      if (!c) { n += 1; c = { n, doc_id: doc, chunk_id: chunk }; byKey.set(`${doc}:${chunk}`, c); }
      return `<a href="#pasaje-${chunk}" class="cita" data-doc="${doc}" data-chunk="${chunk}" aria-label="Cita ${c.n}: pasaje ${chunk}">[${c.n}]</a>`;
    });
    const read = [];
    for (const t of r.evaluacion.tools_called || []) {
      if (t.name === 'read_chunks') for (const p of (t.output && t.output.passages) || []) read.push(p);
    }
    const tools = (r.evaluacion.tools_called || []).map((t) => {
      const out = t.output || {};
      const what = out.error ? `error ${escapeHtml(out.error.code || '')}`
        : out.passages ? plural(out.passages.length, 'pasaje', 'pasajes')
          : out.documents ? plural(out.documents.length, 'documento', 'documentos')
            : out.entries ? plural(out.entries.length, 'entrada', 'entradas') : 'sin datos';
      const args = escapeHtml(JSON.stringify(t.input_parameters));
      return `<li><code>${escapeHtml(t.name)}</code> ${args} → ${what}</li>`;
    }).join('');
    const fuentes = r.citas.map((c) => `<li><a href="#pasaje-${c.chunk_id}" class="cita" data-doc="${c.doc_id}" data-chunk="${c.chunk_id}">[${c.n}]</a> `
      + `<span class="ids">${escapeHtml(c.doc_id)}:${escapeHtml(c.chunk_id)}</span> — ${escapeHtml(c.fuente)}${c.pagina ? `, pág. ${c.pagina}` : ''}</li>`).join('');
    const leidos = read.map((p) => `<li><a href="#pasaje-${p.chunk_id}" class="cita" data-doc="${p.doc_id}" data-chunk="${p.chunk_id}">${escapeHtml(p.chunk_id)}</a>`
      + ` — ${escapeHtml(p.source_path || p.title || '')}${p.page ? `, pág. ${p.page}` : ''}</li>`).join('');
    const perRole = Object.entries(md.tokens_por_agente || {}).map(([role, t]) => `${ROLES[role] || role} ${num(t.total)}`).join(', ');
    let vis = '';
    if (r.visualizacion) {
      const comps = r.visualizacion.componentes.map((c) => escapeHtml(c.titulo)).join('; ');
      const f = r.visualizacion.filtros;
      const fs = Object.entries(f).filter(([, v]) => v !== null).map(([k, v]) => `${k}: ${escapeHtml(String(v))}`).join(', ');
      vis = `<p class="vis" data-componente="${escapeHtml(r.visualizacion.componentes[0].tipo)}">El agente eligió la vista: ${comps}${fs ? ` (filtros: ${fs})` : ''}.</p>`;
    }
    el.innerHTML = this.renderValidity(vigencia)
      + `<div class="answer" data-estado="${escapeHtml(md.estado)}">${text.replace(/\n/g, '<br>')}</div>${vis}`
      + `<p class="meta">Estado: ${escapeHtml(ESTADOS[md.estado] || md.estado)} (${escapeHtml(md.motivo_terminacion)}) · ${escapeHtml(md.modo === 'llm' ? this.modelText : 'modo sin modelo')}`
      + ` · ${plural(md.num_interacciones, 'llamada al modelo', 'llamadas al modelo')} · ${plural(md.llamadas_herramientas, 'herramienta', 'herramientas')}`
      + ` · tokens ${num(md.tokens.input)} + ${num(md.tokens.output)} = ${num(md.tokens.total)}${perRole ? ` (${perRole})` : ''}`
      + ` · ${num(Math.round(md.latencia_ms))} ms · roles: ${md.agentes_invocados.map((a) => escapeHtml(ROLES[a] || a)).join(' → ')}</p>`
      + (fuentes ? `<h3>Fuentes citadas</h3><ol class="fuentes">${fuentes}</ol>` : '')
      + (leidos ? `<h3>Pasajes leídos</h3><ol class="fuentes leidos">${leidos}</ol>` : '')
      + (md.run_id ? `<p class="enlace"><a href="${escapeHtml(window.location.search)}#respuesta=${escapeHtml(md.run_id)}" class="enlace-respuesta">Enlace a esta respuesta</a></p>` : '')
      + (tools ? `<details><summary>Resultados de herramientas (${num(r.evaluacion.tools_called.length)})</summary><ul class="fuentes">${tools}</ul></details>` : '');
    const stale = new Set(((vigencia && vigencia.citas_no_vigentes) || []).map((c) => c.chunk_id));
    el.querySelectorAll('.answer a.cita, ol.fuentes a.cita').forEach((a) => {
      if (!stale.has(a.dataset.chunk)) return;
      a.classList.add('obsoleta');
      a.title = 'Cita no vigente: el pasaje fue reemplazado o retractado después de la respuesta';
    });
    el.querySelectorAll('a.cita').forEach((a) => a.addEventListener('click', (e) => {
      e.preventDefault();
      this.onCitation(a.dataset.doc, a.dataset.chunk, a.textContent);
    }));
    if (r.visualizacion && this.onVisualization) this.onVisualization(r.visualizacion);
  }
}
