"""Place-name matching: :class:`Gazetteer` finds the names of its places in a passage.

It compiles every alias into one :class:`~radar_pipeline.precompute.text.PhraseMatcher`, drops the
matches that are not places (decoy phrases and words, lower-case words, case-sensitive
abbreviations written otherwise, URLs, upper-case lists of localities — rules 1-2 of the package
doc), reads the level cue around each name, and leaves the choice between candidates to
:mod:`radar_pipeline.precompute.places.resolution`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from radar_pipeline.precompute.places.model import Place, PlaceHit
from radar_pipeline.precompute.places.resolution import (
    TIGHT_WINDOW,
    WINDOW,
    Pending,
    resolve,
)
from radar_pipeline.precompute.text import PhraseMatcher, in_url
from radar_pipeline.textfold import fold_spans

__all__ = ["Gazetteer", "hits_to_rows"]

_CAPS_WORD = re.compile(r"[^\W\d_]{2,}")


def _in_caps_run(text: str, start: int, end: int) -> bool:
    """Whether the word before ``text[start:end]`` is all capitals ("ABOUT US", "CONTACT US")."""
    before = _CAPS_WORD.findall(text[max(0, start - 30) : start])
    return bool(before and before[-1].isupper())


def _in_caps_list(text: str, start: int) -> bool:
    """Whether the match sits on an upper-case line of ';'-separated names — the Codefest alerts'
    listings of veredas, corregimientos and community councils ("PUEBLO NUEVO; LOS ANDES; ..."),
    which are sub-municipal localities, not the homonymous municipalities."""
    lo = text.rfind("\n", 0, start) + 1
    hi = text.find("\n", start)
    line = text[lo : hi if hi >= 0 else len(text)]
    if line.count(";") < 3:  # checked first: most lines are not lists, and counting letters is the cost
        return False
    letters = [c for c in line if c.isalpha()]
    return bool(letters) and sum(c.isupper() for c in letters) >= 0.9 * len(letters)


@dataclass
class Gazetteer:
    """Places plus compiled matchers; see the package doc for the matching and resolution rules.

    ``window``/``tight_window``: characters, passed to the resolution policy (``WINDOW``/``TIGHT_WINDOW``).
    """

    version: str
    sha: str
    places: dict[str, Place]
    context: dict[str, str]
    extra_decoys: tuple[str, ...] = ()
    ctx_keys: frozenset[str] = frozenset()
    case_sensitive: frozenset[str] = frozenset()
    window: int = WINDOW
    tight_window: int = TIGHT_WINDOW
    stats: dict[str, int] = field(
        default_factory=lambda: {
            "decoy": 0,
            "context_decoy": 0,
            "lowercase": 0,
            "case": 0,
            "in_url": 0,
            "list_of_localities": 0,
        }
    )

    def __post_init__(self) -> None:
        self._matcher = PhraseMatcher()
        self._decoys = PhraseMatcher()
        for p in self.places.values():
            for text, _lang in p.aliases:
                self._matcher.add(text, (p.place_id, text if text in self.case_sensitive else None))
        for d in self.extra_decoys:
            self._decoys.add(d, "decoy")
        self._matcher.compile()
        self._decoys.compile()
        self._decoy_before = re.compile(self.context["decoy_before"])
        self._decoy_after = re.compile(self.context["decoy_after"])
        self._dept_before = re.compile(self.context["department_before"])
        self._dept_after = re.compile(self.context["department_after"])
        self._mun_before = re.compile(self.context["municipality_before"])
        self._mun_after = re.compile(self.context["municipality_after"])

    @property
    def label(self) -> str:
        return f"places:{self.version}@{self.sha[:8]}"

    def with_decoys(self, phrases: Iterable[str]) -> Gazetteer:
        """A copy whose decoy list also has those ``phrases`` (entity aliases) that contain a place
        name — the others can never hide a place, and leaving them out keeps matching fast."""
        keep = [ph for ph in phrases if any(True for _ in self._matcher.finditer(ph))]
        return Gazetteer(
            self.version,
            self.sha,
            self.places,
            self.context,
            tuple(self.extra_decoys) + tuple(keep),
            self.ctx_keys,
            self.case_sensitive,
            self.window,
            self.tight_window,
        )

    # ------------------------------------------------------------------ matching
    def _cue(self, folded: str, start: int, end: int) -> str | None:
        before = folded[max(0, start - 60) : start]
        after = folded[end : end + 30]
        if self._dept_before.search(before) or self._dept_after.match(after):
            return "department"
        if self._mun_before.search(before) or self._mun_after.match(after):
            return "municipality"
        return None

    def _kept_place_ids(
        self, m, text: str, folded: str, blocked: list[tuple[int, int]], case_known: bool = True
    ) -> list[str] | None:
        """The place ids a phrase match may mean, or None when a filter drops it (rules 1-2 of the
        package doc; each drop is counted in ``stats``). ``case_known=False`` (a text typed without
        capitals) skips the capital-letter rule; case-sensitive abbreviations still need their case."""
        if any(s < m.end and m.start < e for s, e in blocked):
            self.stats["decoy"] += 1
            return None
        if case_known and not m.matched[:1].isupper():
            self.stats["lowercase"] += 1
            return None
        if self._decoy_before.search(folded[max(0, m.start - 40) : m.start]) or self._decoy_after.match(
            folded[m.end : m.end + 20]
        ):
            self.stats["context_decoy"] += 1
            return None
        written = " ".join(m.matched.split())
        pids = [
            pid
            for pid, cs in m.payloads
            if cs is None
            or (cs == written and not _in_caps_run(text, m.start, m.end))
            # a question typed without capitals ("drones de eeuu"): an abbreviation of four letters or
            # more is no common word in any case ("usa", "us" are, so three letters keep their case)
            or (not case_known and cs.lower() == written.lower() and sum(c.isalpha() for c in cs) >= 4)
        ]
        if not pids:
            self.stats["case"] += 1
            return None
        if in_url(text, m.start, m.end):
            self.stats["in_url"] += 1
            return None
        if _in_caps_list(text, m.start):
            self.stats["list_of_localities"] += 1
            return None
        return pids

    def _candidates(
        self, text: str, folded: str, decoy_spans: Sequence[tuple[int, int]], case_known: bool = True
    ) -> list[Pending]:
        """The passage's place-name matches that survive the filters, with candidates and level cue."""
        blocked = list(decoy_spans) + [(m.start, m.end) for m in self._decoys.finditer(text, folded)]
        pend: list[Pending] = []
        for m in self._matcher.finditer(text, folded):
            pids = self._kept_place_ids(m, text, folded, blocked, case_known)
            if pids is None:
                continue
            cands = [self.places[pid] for pid in dict.fromkeys(pids)]
            weak = m.key in self.ctx_keys
            pend.append(Pending(m.start, m.end, m.matched, cands, self._cue(folded, m.start, m.end), weak=weak))
        return pend

    def find(
        self,
        text: str,
        *,
        folded: str | None = None,
        decoy_spans: Sequence[tuple[int, int]] = (),
        case_known: bool = True,
    ) -> list[PlaceHit]:
        """Place mentions in ``text`` (boilerplate already blanked), resolved or ``unresolved``.

        ``decoy_spans`` are extra spans that cannot hold a place (e.g. the entity mentions of the
        same passage). Dropped matches (decoys, lower-case words) are counted in ``stats``.
        ``case_known=False``: the text was typed without capitals (a hurried question), so the
        capital-letter rule cannot apply.
        """
        folded = fold_spans(text) if folded is None else folded
        pend = self._candidates(text, folded, decoy_spans, case_known)
        resolve(pend, folded, self.places, window=self.window, tight_window=self.tight_window)
        return [
            PlaceHit(p.resolved, p.start, p.end, p.matched, p.resolution, tuple(sorted(c.place_id for c in p.cands)))
            for p in pend
        ]

    # ------------------------------------------------------------------ rows
    def rows(self) -> list[dict[str, Any]]:
        """``place_gazetteer`` rows (content columns)."""
        return [
            {
                "place_id": p.place_id,
                "level": p.level,
                "code": p.code,
                "iso2": p.iso2,
                "name": p.name,
                "country_code": p.country_code,
                "department_code": p.department_code,
                "department_name": p.department_name,
                "aliases": [
                    {"text": t, "lang": lang, **({"case_sensitive": True} if t in self.case_sensitive else {})}
                    for t, lang in p.aliases
                ],
                "context_required": p.context_required,
                "has_shape": p.has_shape,
                "shape_source": p.shape_source,
                "gazetteer_version": self.label,
            }
            for p in sorted(self.places.values(), key=lambda p: p.place_id)
        ]

    def department_of(self, place: Place) -> str | None:
        """DIVIPOLA department code of a Colombian place (its own code for a department)."""
        if place.level == "department":
            return place.code
        return place.department_code


def hits_to_rows(
    hits: Iterable[PlaceHit], *, doc_id: str, chunk_id: str, language: str | None, phenomenon: str | None, version: str
) -> list[dict[str, Any]]:
    """``place_mentions`` rows for the hits of one passage."""
    out = []
    for h in hits:
        p = h.place
        out.append(
            {
                "place_id": p.place_id if p else None,
                "level": p.level if p else None,
                "code": p.code if p else None,
                "country_code": p.country_code if p else None,
                "department_code": (p.code if p and p.level == "department" else (p.department_code if p else None)),
                "doc_id": doc_id,
                "chunk_id": chunk_id,
                "char_start": h.start,
                "char_end": h.end,
                "matched": h.matched,
                "resolution": h.resolution,
                "candidates": list(h.candidates),
                "language": language,
                "phenomenon": phenomenon,
                "gazetteer_version": version,
            }
        )
    return out
