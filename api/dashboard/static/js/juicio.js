// Radar — página de juicio de relevancia: pregunta + pasaje, teclas 0/1/2, → siguiente, ← anterior.
// Blind by design: the API sends only item id, question and passage text (no system, rank or score).
// State lives in the URL (?lote=…&anotador=…&ronda=…&i=…) so a reload resumes the same round.

const API = "/tablero/api/juicio";
const $ = (id) => document.getElementById(id);
const state = { lote: null, anotador: null, ronda: null, items: [], i: 0, saving: false };

async function api(method, path, body) {
  const r = await fetch(API + path, {
    method,
    headers: body ? { "content-type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  let data = null;
  try { data = await r.json(); } catch { data = null; }
  if (!r.ok) {
    const msg =
      (data && data.error && data.error.message) ||
      (data && data.detail ? "solicitud no válida" : `error HTTP ${r.status}`);
    throw new Error(msg);
  }
  return data;
}

function syncUrl() {
  const u = new URL(location.href);
  u.search = "";
  if (state.lote) {
    u.searchParams.set("lote", state.lote);
    u.searchParams.set("anotador", state.anotador);
    u.searchParams.set("ronda", String(state.ronda));
    u.searchParams.set("i", String(state.i + 1));
  }
  history.replaceState(null, "", u);
}

async function loadBatches() {
  const sel = $("lote");
  try {
    const { lotes } = await api("GET", "/lotes");
    sel.innerHTML = "";
    if (!lotes.length) {
      sel.append(new Option("No hay lotes: exporte uno con «radar judge export»", ""));
      return;
    }
    for (const l of lotes) {
      sel.append(new Option(`${l.lote} — ${l.items} pasajes, ${l.preguntas} preguntas`, l.lote));
    }
  } catch (e) {
    sel.innerHTML = "";
    sel.append(new Option("No se pudieron cargar los lotes", ""));
    $("inicio-estado").textContent = e.message;
  }
}

async function start(anotador, lote, ronda, position) {
  $("inicio-estado").textContent = "Abriendo el lote…";
  try {
    const s = await api("POST", "/sesiones", ronda ? { anotador, lote, ronda } : { anotador, lote });
    Object.assign(state, { lote: s.lote, anotador: s.anotador, ronda: s.ronda, items: s.items });
    const firstOpen = s.items.findIndex((it) => it.nota === null);
    state.i = position !== null ? Math.min(Math.max(position, 0), s.items.length - 1) : Math.max(firstOpen, 0);
    $("inicio").hidden = true;
    $("tarea").hidden = false;
    render();
  } catch (e) {
    $("inicio-estado").textContent = e.message;
  }
}

function graded() {
  return state.items.filter((it) => it.nota !== null).length;
}

function render() {
  const it = state.items[state.i];
  $("posicion").textContent = `Pasaje ${state.i + 1} de ${state.items.length}`;
  $("hechos").textContent = `${graded()} calificados`;
  $("ronda").textContent = String(state.ronda);
  $("quien").textContent = state.anotador;
  $("pregunta").textContent = it.pregunta || "(pregunta no disponible para este lote)";
  $("pasaje").textContent = it.texto;
  $("pasaje").scrollTop = 0;
  for (const b of document.querySelectorAll(".notas button")) {
    b.setAttribute("aria-pressed", String(it.nota !== null && Number(b.dataset.nota) === it.nota));
  }
  $("atras").disabled = state.i === 0;
  document.body.dataset.item = it.item_id; // for tests and screen readers' context; not shown
  syncUrl();
}

function finish() {
  $("tarea").hidden = true;
  $("fin").hidden = false;
  const left = state.items.length - graded();
  $("fin-texto").textContent =
    `${state.anotador}, ronda ${state.ronda}: ${graded()} de ${state.items.length} pasajes calificados` +
    (left ? ` (${left} sin calificar: vuelva atrás para completarlos).` : ".");
}

function go(delta) {
  const next = state.i + delta;
  if (next < 0) return;
  if (next >= state.items.length) {
    finish();
    return;
  }
  state.i = next;
  render();
}

async function grade(nota) {
  if (state.saving) return;
  const it = state.items[state.i];
  state.saving = true;
  $("guardado").textContent = "Guardando…";
  try {
    await api("PUT", `/items/${encodeURIComponent(it.item_id)}`, { anotador: state.anotador, ronda: state.ronda, nota });
    it.nota = nota;
    $("guardado").textContent = `Guardado: ${["no relevante", "parcial", "relevante"][nota]}.`;
    go(1);
  } catch (e) {
    $("guardado").textContent = `No se guardó: ${e.message}`;
  } finally {
    state.saving = false;
  }
}

function onKey(ev) {
  if ($("tarea").hidden || ev.altKey || ev.ctrlKey || ev.metaKey) return;
  const tag = (ev.target && ev.target.tagName) || "";
  if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
  if (["0", "1", "2"].includes(ev.key)) {
    ev.preventDefault();
    grade(Number(ev.key));
  } else if (ev.key === "ArrowRight" || (ev.key === "Enter" && tag !== "BUTTON")) {
    ev.preventDefault();
    go(1);
  } else if (ev.key === "ArrowLeft") {
    ev.preventDefault();
    go(-1);
  }
}

function init() {
  document.addEventListener("keydown", onKey);
  for (const b of document.querySelectorAll(".notas button")) {
    b.addEventListener("click", () => grade(Number(b.dataset.nota)));
  }
  $("siguiente").addEventListener("click", () => go(1));
  $("atras").addEventListener("click", () => go(-1));
  $("inicio").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const anotador = $("anotador").value.trim();
    const lote = $("lote").value;
    if (!anotador || !lote) {
      $("inicio-estado").textContent = "Indique su nombre y elija un lote.";
      return;
    }
    start(anotador, lote, null, null);
  });
  const p = new URL(location.href).searchParams;
  loadBatches().then(() => {
    if (p.get("lote") && p.get("anotador")) {
      const ronda = Number(p.get("ronda")) || null;
      const i = p.get("i") ? Number(p.get("i")) - 1 : null;
      $("anotador").value = p.get("anotador");
      start(p.get("anotador"), p.get("lote"), ronda, i);
    }
  });
}

init();
