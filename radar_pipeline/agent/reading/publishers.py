"""Which of the corpus's source collections a question names by its publisher ("según la ESA",
"el informe del CSET", "el Atlas Comparativo de la Defensa de RESDAL", "la Defensoría del Pueblo").

Analysts ask about a publisher's findings by naming the publisher; the passages that answer sit in
that publisher's collection (the passage table's ``collection``: the institution code of a Codefest
id, ``radar_pipeline.collection.collection_of``), but the ranked search over the whole corpus does
not know it, and other publishers' documents on the same topic outrank them (a fresh tester:
"Según el CSIS, ¿qué capacidades contraespaciales…?" answered from Secure World Foundation reports
only). The analyst searches the named collection too (``roles.analyst``, tool ``search_evidence``
with ``coleccion``).

The registry is data: ``data/publishers.toml`` (code, acronyms matched as written, names matched
case- and accent-folded on word boundaries). ``publishers_named`` returns codes in the order the
question names them; a code named twice counts once.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from radar_pipeline.textfold import fold_question

PUBLISHERS_PATH = Path(__file__).with_name("data") / "publishers.toml"

__all__ = ["PUBLISHERS_PATH", "Publisher", "display_name", "load_publishers", "publishers_named"]


@dataclass(frozen=True)
class Publisher:
    """One source collection: ``code`` (the passage table's ``collection``), ``acronyms`` (matched as
    written), ``names`` (matched folded)."""

    code: str
    acronyms: tuple[str, ...]
    names: tuple[str, ...]


@lru_cache(maxsize=4)
def load_publishers(path: Path = PUBLISHERS_PATH) -> tuple[Publisher, ...]:
    """The registry in ``path``. Raises ``ValueError`` naming the entry when a table lacks ``code``,
    has neither acronyms nor names, or repeats a code, an acronym or a name of another entry."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out: list[Publisher] = []
    seen: dict[str, str] = {}
    for n, entry in enumerate(data.get("publisher", []), 1):
        code = str(entry.get("code") or "").strip()
        acronyms = tuple(str(a).strip() for a in entry.get("acronyms", []) if str(a).strip())
        names = tuple(str(a).strip() for a in entry.get("names", []) if str(a).strip())
        if not code or not (acronyms or names):
            raise ValueError(f"{path.name}: publisher {n} needs a code and at least one acronym or name")
        for key in (f"code:{code}", *(f"a:{a}" for a in acronyms), *(f"n:{fold_question(x)}" for x in names)):
            if key in seen:
                raise ValueError(f"{path.name}: {key.split(':', 1)[1]!r} of {code} is also {seen[key]}'s")
            seen[key] = code
        out.append(Publisher(code, acronyms, names))
    return tuple(out)


@lru_cache(maxsize=4)
def _patterns(path: Path = PUBLISHERS_PATH) -> tuple[tuple[str, re.Pattern | None, re.Pattern | None], ...]:
    out = []
    for p in load_publishers(path):
        acr = (
            re.compile(r"(?<![\w/-])(?:" + "|".join(re.escape(a) for a in p.acronyms) + r")(?![\w/-])")
            if p.acronyms
            else None
        )
        names = sorted({fold_question(x) for x in p.names}, key=len, reverse=True)
        nam = re.compile(r"(?<!\w)(?:" + "|".join(re.escape(x) for x in names) + r")(?!\w)") if names else None
        out.append((p.code, acr, nam))
    return tuple(out)


def publishers_named(question: str, path: Path = PUBLISHERS_PATH) -> list[str]:
    """The collection codes whose publisher ``question`` names, in order of first mention
    (``["ESA"]`` for "¿Por qué sugiere la ESA que…?"); ``[]`` when it names none."""
    folded = fold_question(question)
    found: list[tuple[float, str]] = []
    for code, acr, nam in _patterns(path):
        starts = [m.start() / max(1, len(question)) for m in acr.finditer(question)] if acr is not None else []
        m = nam.search(folded) if nam is not None else None
        if m is not None:
            starts.append(m.start() / max(1, len(folded)))
        if starts:
            found.append((min(starts), code))
    return [code for _, code in sorted(found)]


def display_name(code: str, path: Path = PUBLISHERS_PATH) -> str:
    """How an answer names the collection ``code``: its first acronym, else its first name, else the
    code itself (``"CSIS"``, ``"Atlantic Council"``; an unknown code is returned as given)."""
    for p in load_publishers(path):
        if p.code == code:
            return (p.acronyms or p.names or (code,))[0]
    return code
