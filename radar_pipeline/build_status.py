"""What Radar is building right now, for the readers of the service (issue 24 §4).

``radar up`` follows the Dagster runs it starts (``radar_cli.status.UpWatcher``: each stage's
done/total and rate, from the runs' event logs) and publishes that view here every second, as one
small JSON file, ``<RADAR_HOME>/status/build.json`` (written atomically: a temporary file renamed
over it). The API (``/chat``, ``/health``, the dashboard) reads it to say, in Spanish, what is being
built and how far, instead of "not materialized" while the daemon is building it. A file not
rewritten for ``MAX_AGE_S`` seconds is no evidence of a build (``radar up`` stopped, or crashed): it is
ignored.

File shape: ``{"updated": epoch s, "started": epoch s, "stages": [{"key", "status", "done", "total",
"unit", "rate", "eta_s"}]}``; ``status`` one of ``queued | running | done | failed | skipped``,
``rate`` in ``unit`` per second, ``eta_s`` seconds left at that rate (``None``: no rate yet).
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

MAX_AGE_S = 30.0  # `radar up` rewrites the file every second; 30 s covers a loaded machine's stalls

# Spanish names of the stages (Dagster step keys of the assets), in the order a build reaches them.
STAGE_NAMES = {
    "source_files": "inventario del corpus",
    "documents": "extracción de texto",
    "pages": "páginas",
    "chunks": "pasajes",
    "embeddings": "vectores densos",
    "bm25_index": "índice léxico (BM25)",
    "faiss_index": "índice denso (FAISS)",
    "pgvector_index": "índice denso en PostgreSQL",
    "pg_bm25_index": "índice léxico en PostgreSQL",
    "rerank_vectors": "vectores del re-ranqueador",
    "rerank_index": "índice del re-ranqueador",
}
# What must exist before passages can be searched at all (the lexical stage is the first served).
SEARCH_GATE = ("source_files", "documents", "pages", "chunks", "bm25_index")
UNITS = {"files": "archivos", "chunks": "pasajes", "passages": "pasajes", "docs": "documentos", "rows": "filas"}


@dataclass
class BuildStage:
    """One stage of the build: ``done`` of ``total`` ``unit`` (``None`` when unknown), ``rate`` in
    ``unit``/s, ``eta_s`` seconds left at that rate."""

    key: str
    status: str
    done: int | None = None
    total: int | None = None
    unit: str = ""
    rate: float | None = None
    eta_s: float | None = None

    @property
    def name(self) -> str:
        """The stage's name in Spanish (the step key when it has none)."""
        return STAGE_NAMES.get(self.key, self.key.replace("_", " "))


@dataclass
class BuildStatus:
    """The build ``radar up`` published: its stages, when it started and when it was last written."""

    stages: list[BuildStage] = field(default_factory=list)
    updated: float = 0.0
    started: float | None = None

    @property
    def building(self) -> bool:
        """True while a stage runs or waits in the queue."""
        return any(s.status in ("running", "queued") for s in self.stages)

    def as_dict(self) -> dict:
        """The JSON shape (see the module docstring) plus ``en_curso`` and ``mensaje`` (Spanish)."""
        return {
            "en_curso": self.building,
            "mensaje": describe(self),
            "updated": self.updated,
            "started": self.started,
            "stages": [asdict(s) for s in self.stages],
        }


def default_path() -> Path:
    """``<RADAR_HOME>/status/build.json``."""
    from radar_pipeline.config import StorageSettings

    return StorageSettings().home / "status" / "build.json"


def write_build_status(path: Path, stages: list[BuildStage], started: float | None = None) -> None:
    """Write ``stages`` to ``path`` atomically (a reader never sees half a file). Raises ``OSError``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = json.dumps({"updated": time.time(), "started": started, "stages": [asdict(s) for s in stages]})
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".build-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(body)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_build_status(path: Path | None = None, *, max_age_s: float = MAX_AGE_S, now: float | None = None):
    """The published build (``BuildStatus``) or ``None``: no file, unreadable, or older than
    ``max_age_s`` seconds (no ``radar up`` is publishing). ``path`` defaults to :func:`default_path`."""
    path = default_path() if path is None else path
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        updated = float(raw["updated"])
        stages = [BuildStage(**{k: s.get(k) for k in BuildStage.__dataclass_fields__}) for s in raw["stages"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if (time.time() if now is None else now) - updated > max_age_s:
        return None
    return BuildStatus(stages=stages, updated=updated, started=raw.get("started"))


def _minutes(seconds: float) -> str:
    if seconds < 90:
        return "menos de 2 minutos"
    minutes = math.ceil(seconds / 60)
    if minutes < 120:
        return f"unos {minutes} minutos"
    return f"unas {minutes / 60:.1f} horas".replace(".", ",")


def _count(n: int) -> str:
    return f"{n:,}".replace(",", ".")


def _stage_words(s: BuildStage) -> str:
    unit = UNITS.get(s.unit, s.unit)
    if s.status == "running" and s.total:
        done = s.done or 0
        pct = round(100 * done / s.total) if s.total else 0
        return f"{s.name}: {_count(done)} de {_count(s.total)} {unit} ({pct} %)".replace("  ", " ")
    if s.status == "running":
        return f"{s.name}: en curso"
    return f"{s.name}: en cola"


def describe(status: BuildStatus | None) -> str | None:
    """In Spanish, what is being built and how far, with an estimate, e.g. «Radar está construyendo
    el índice de pasajes: vectores densos: 1.200 de 3.000 pasajes (40 %); índice léxico (BM25): en
    cola. Tiempo estimado de la etapa en curso: unos 6 minutos.» ``None`` when nothing is being built.

    The estimate is the running stages' time left at their measured rate (the longest of them); with no
    rate measured yet it says so. Stages that gate searching (``SEARCH_GATE``) are named first."""
    if status is None or not status.building:
        return None
    active = [s for s in status.stages if s.status in ("running", "queued")]
    active.sort(key=lambda s: (s.status != "running", s.key not in SEARCH_GATE))
    parts = "; ".join(_stage_words(s) for s in active[:4])
    more = f" (y {len(active) - 4} etapas más)" if len(active) > 4 else ""
    etas = [s.eta_s for s in active if s.status == "running" and s.eta_s is not None]
    if etas:
        estimate = f"Tiempo estimado de la etapa en curso: {_minutes(max(etas))}."
    else:
        estimate = "Aún no hay una estimación del tiempo restante (la etapa acaba de empezar)."
    gate = [s for s in active if s.key in SEARCH_GATE]
    what = "el índice de pasajes" if gate else "la base de conocimiento"
    return f"Radar está construyendo {what}: {parts}{more}. {estimate}"


def building_message() -> str | None:
    """:func:`describe` of the build published at :func:`default_path` (``None``: none running)."""
    return describe(read_build_status())
