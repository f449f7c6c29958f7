"""The view vocabulary: the one accessor of ``precompute/data/views.yaml``.

``view_vocabulary()`` compiles the words that name each dashboard component or ask for it, the
phrases that state a phenomenon, and the trigger words that typo tolerance corrects towards
(``ViewVocabulary.correct``: Damerau-Levenshtein through ``rapidfuzz``, ≤ 1 edit for words of 6–8
letters, ≤ 2 from 9, same first letter, one unique nearest trigger word, never an inflection of it
nor a listed real word). ``intent``, ``understanding`` (the period reading) and ``followup`` take
their words from it. It imports nothing of the agent: every reading module may read it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from rapidfuzz import process as _fuzz_process
from rapidfuzz.distance import DamerauLevenshtein

from radar_pipeline.textfold import fold_question

__all__ = ["ViewVocabulary", "view_vocabulary", "load_view_vocabulary", "VIEWS_PATH"]

# --------------------------------------------------------------------------- view vocabulary
VIEWS_PATH = Path(__file__).resolve().parents[2] / "precompute" / "data" / "views.yaml"
_TYPO_WORD = re.compile(r"(?<![\w-])[a-z]{6,}(?![\w-])")


def _entry_pattern(entry) -> str:
    """One ``views.yaml`` entry as a regex over folded text (see the file's header)."""
    if isinstance(entry, dict):
        if set(entry) != {"regex"}:
            raise ValueError(f"views.yaml: an entry is a phrase or {{regex: ...}}, not {entry!r}")
        re.compile(entry["regex"])
        return entry["regex"]
    words = fold_question(str(entry)).split()
    if not words:
        raise ValueError("views.yaml: empty phrase")
    parts = [re.escape(w[:-1]) + r"\w*" if w.endswith("*") else re.escape(w) for w in words]
    return " ".join(parts) + r"(?!\w)"


def _alternation(entries) -> re.Pattern | None:
    pats = [_entry_pattern(e) for e in entries or []]
    return re.compile(r"(?<!\w)(?:" + "|".join(pats) + ")") if pats else None


_ENDING_LETTERS = set("aeiosnrdlbmt")  # letters of Spanish and Portuguese endings and enclitics (-aban, -lo, -me)


def _inflection(word: str, other: str) -> bool:
    """Whether two words differ only in their endings: one is a prefix of the other
    ("tendencial"/"tendencia"), or all but the last two letters of the shorter are shared and the
    differing endings are made of ending letters ("concentrada"/"concentran", "tempranos"/
    "tempranas"; not "matris"/"matriz"): another form of the same word, which the rules' own stems
    handle, never a typo to correct."""
    n = 0
    for a, b in zip(word, other, strict=False):
        if a != b:
            break
        n += 1
    if n >= min(len(word), len(other)):
        return True
    return n >= min(len(word), len(other)) - 2 and set(word[n:] + other[n:]) <= _ENDING_LETTERS


@dataclass(frozen=True)
class ViewVocabulary:
    """``views.yaml`` compiled: one pattern per section over ``textfold.fold_question`` text.

    ``names``/``cues``: component → pattern of the words that name the view / ask for it without
    naming it; ``unless``: component → phrases that void its cues ("crecimiento económico");
    ``map_names``/``map_cues``: the same for the map family; ``phenomena``: phenomenon →
    pattern of the phrases that state it; ``triggers``: the words typo tolerance corrects towards
    (``trigger_words``, 6+ letters); ``not_typos``: real words it never corrects. Immutable; the correction cache only grows."""

    version: str
    names: dict[str, re.Pattern]
    cues: dict[str, re.Pattern]
    unless: dict[str, re.Pattern]
    map_names: re.Pattern | None
    map_cues: re.Pattern | None
    phenomena: dict[str, re.Pattern]
    triggers: frozenset[str]
    not_typos: frozenset[str]
    choices: tuple[str, ...] = ()  # ``triggers`` sorted (the candidates ``rapidfuzz`` scans)
    bare: dict[str, re.Pattern] = field(default_factory=dict)  # ``bare_views``: follow-up turns only
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    def named_views(self, folded: str) -> list[tuple[int, int, str]]:
        """``(start, end, component)`` of every view the folded question names, in order of
        position (``map`` for the map family; a map word inside another view's name, as in
        "mapa de calor" or "mapa de relaciones", is that view's)."""
        spans = []
        for comp, rx in self.names.items():
            spans += [(m.start(), m.end(), comp) for m in rx.finditer(folded)]
        if self.map_names is not None:
            for m in self.map_names.finditer(folded):
                if not any(a <= m.start() < b for a, b, _ in spans):
                    spans.append((m.start(), m.end(), "map"))
        return sorted(spans)

    def cued_views(self, folded: str) -> list[str]:
        """Components whose cues the folded question contains (``map`` for a map-family cue), in
        the file's order."""
        out = [
            comp
            for comp, rx in self.cues.items()
            if rx.search(folded) and not (comp in self.unless and self.unless[comp].search(folded))
        ]
        if self.map_cues is not None and self.map_cues.search(folded):
            out.append("map")
        return out

    def stated_phenomena(self, folded: str) -> list[str]:
        """Phenomena the folded question states as its scope, in the file's order."""
        return [p for p, rx in self.phenomena.items() if rx.search(folded)]

    def correct(self, text: str) -> tuple[str, tuple[tuple[str, str], ...]]:
        """``(fold_question(text) with misspelt trigger words replaced, ((typed, read), …))``.

        A word of 6+ letters that is not a trigger word is read as the one trigger word within
        Damerau-Levenshtein distance 1 (2 when both have 9+ letters) that starts with the same
        letter, unless it is another form of it (``_inflection``: "tendencial", "concentrada"),
        listed in ``not_typos``, or two trigger words are equally near. ("precencia" →
        "presencia"; "actores"/"autores" is guarded by ``not_typos``.)"""
        folded = fold_question(text)
        fixes: list[tuple[str, str]] = []

        def sub(m: re.Match) -> str:
            word = m.group(0)
            fixed = self._fix(word)
            if fixed is None:
                return word
            fixes.append((word, fixed))
            return fixed

        return _TYPO_WORD.sub(sub, folded), tuple(fixes)

    def _fix(self, word: str) -> str | None:
        if word in self._cache:
            return self._cache[word]
        out = None
        if word not in self.triggers and word not in self.not_typos:
            found = _fuzz_process.extract(
                word, self.choices, scorer=DamerauLevenshtein.distance, score_cutoff=2, limit=None
            )
            near = [
                (dist, cand)
                for cand, dist, _ in found
                if dist <= (2 if min(len(word), len(cand)) >= 9 else 1)
                and cand[0] == word[0]
                and not _inflection(word, cand)
            ]
            if near:
                best = min(d for d, _ in near)
                cands = {c for d, c in near if d == best}
                out = next(iter(cands)) if len(cands) == 1 else None
        if len(self._cache) < 65536:
            self._cache[word] = out
        return out


def load_view_vocabulary(path: str | Path | None = None) -> ViewVocabulary:
    """Load and compile ``views.yaml`` (default: the reviewed file shipped with the package).
    Raises ``ValueError`` on an unknown phenomenon or a malformed entry (the component names are
    checked against ``agent.visualizer.COMPONENTS`` by the tests: this module sits below it)."""
    from radar_pipeline.vocabulary import PHENOMENA

    data = yaml.safe_load(Path(path or VIEWS_PATH).read_text(encoding="utf-8"))
    comps = data.get("components") or {}
    phen = data.get("phenomena") or {}
    if set(phen) - set(PHENOMENA):
        raise ValueError(f"views.yaml: unknown phenomena {sorted(set(phen) - set(PHENOMENA))}")
    names = {c: p for c, v in comps.items() if (p := _alternation((v or {}).get("names")))}
    cues = {c: p for c, v in comps.items() if (p := _alternation((v or {}).get("cues")))}
    unless = {c: p for c, v in comps.items() if (p := _alternation((v or {}).get("unless")))}
    maps = data.get("maps") or {}
    triggers = {fold_question(w) for w in data.get("trigger_words") or []}
    not_typos = frozenset(fold_question(w) for w in data.get("not_typos") or [])
    return ViewVocabulary(
        version=str(data.get("version", "")),
        names=names,
        cues=cues,
        unless=unless,
        map_names=_alternation(maps.get("names")),
        map_cues=_alternation(maps.get("cues")),
        phenomena={p: rx for p, v in phen.items() if (rx := _alternation(v))},
        triggers=frozenset(w for w in triggers if len(w) >= 6),
        not_typos=not_typos,
        choices=tuple(sorted(w for w in triggers if len(w) >= 6)),
        bare={c: p for c, v in (data.get("bare_views") or {}).items() if (p := _alternation(v))},
    )


@functools.lru_cache(maxsize=1)
def view_vocabulary() -> ViewVocabulary:
    """The bundled view vocabulary (``precompute/data/views.yaml``), loaded once; immutable."""
    return load_view_vocabulary()
