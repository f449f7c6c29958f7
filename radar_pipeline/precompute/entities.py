"""The entity dictionary (``data/entities.yaml``) and dictionary matching on passages.

No model: an entity is mentioned where one of its reviewed aliases occurs on word boundaries in
the case- and accent-folded passage, outside any decoy phrase and outside page boilerplate. All
aliases of all entities are compiled into one trie-shaped regex (``text.PhraseMatcher``), so a
passage is scanned once whatever the dictionary size.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from radar_pipeline.precompute.text import PhraseMatcher, in_url
from radar_pipeline.textfold import fold_phrase, fold_spans
from radar_pipeline.vocabulary import PHENOMENA

__all__ = [
    "Alias",
    "Entity",
    "EntityDictionary",
    "EntityHit",
    "load_entity_dictionary",
    "DEFAULT_ENTITIES_PATH",
    "CATEGORIES",
]

DEFAULT_ENTITIES_PATH = Path(__file__).with_name("data") / "entities.yaml"
CATEGORIES = ("armed_group", "actor", "program", "technology")
LANGS = ("es", "en", "pt")


@dataclass(frozen=True)
class Alias:
    """One spelling of an entity. ``regex`` aliases are patterns over folded text."""

    entity_id: str
    text: str
    lang: str
    case_sensitive: bool = False
    phenomena: frozenset[str] | None = None
    regex: str | None = None

    def accepts(self, matched: str, phenomenon: str | None) -> bool:
        """Whether this alias may count ``matched`` (original text) in a document of ``phenomenon``."""
        if self.phenomena is not None and phenomenon not in self.phenomena:
            return False
        if self.case_sensitive and " ".join(matched.split()) != " ".join(self.text.split()):
            return False
        return True

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"text": self.text, "lang": self.lang}
        if self.case_sensitive:
            out["case_sensitive"] = True
        if self.phenomena is not None:
            out["phenomena"] = sorted(self.phenomena)
        if self.regex:
            out["regex"] = self.regex
        return out


@dataclass(frozen=True)
class Entity:
    entity_id: str
    name: str
    category: str
    phenomenon: str
    aliases: tuple[Alias, ...]
    decoys: tuple[str, ...] = ()
    context_aliases: tuple[str, ...] = ()
    """Short forms that name the entity only where the context already does ("las disidencias" in
    a question or passage about the FARC dissidents): never counted as a mention (the matcher does
    not read them); the agent's coverage and premise checks use them."""


@dataclass(frozen=True)
class EntityHit:
    """A counted mention: ``[start, end)`` in the passage text, as written (``matched``)."""

    entity_id: str
    category: str
    start: int
    end: int
    matched: str
    alias: str
    alias_lang: str


@dataclass
class EntityDictionary:
    """Loaded, validated dictionary plus its compiled matchers.

    ``version`` is the file's declared version; ``sha`` the SHA-256 of its bytes (a change without
    a version bump is still visible in lineage).
    """

    version: str
    sha: str
    entities: dict[str, Entity]
    path: str = ""
    _matcher: PhraseMatcher = field(default=None, repr=False)  # type: ignore[assignment]
    _decoys: PhraseMatcher = field(default=None, repr=False)  # type: ignore[assignment]
    stats: dict[str, int] = field(default_factory=lambda: {"ambiguous": 0, "rejected_case": 0, "decoy": 0, "in_url": 0})

    def __post_init__(self) -> None:
        self._matcher = PhraseMatcher()
        self._decoys = PhraseMatcher()
        for ent in self.entities.values():
            for al in ent.aliases:
                if al.regex:
                    self._matcher.add_regex(al.regex, al)
                else:
                    self._matcher.add(al.text, al)
            for d in ent.decoys:
                self._decoys.add(d, ent.entity_id)
        self._matcher.compile()
        self._decoys.compile()

    @property
    def label(self) -> str:
        """``entities:<version>@<sha[:8]>`` — the input version recorded in lineage."""
        return f"entities:{self.version}@{self.sha[:8]}"

    def alias_phrases(self) -> list[str]:
        """Every literal alias (for use as place decoys: a group named after a place is not the place)."""
        return [al.text for e in self.entities.values() for al in e.aliases if not al.regex]

    def find(self, text: str, *, phenomenon: str | None = None, folded: str | None = None) -> list[EntityHit]:
        """Entity mentions in ``text`` (already boilerplate-masked if needed), in order.

        ``phenomenon`` is the document's phenomenon (alias restrictions use it). Matches inside a
        decoy phrase or inside a URL/e-mail address are dropped; a phrase whose accepted aliases
        belong to more than one entity is dropped too (counted in ``stats['ambiguous']``) — never
        forced onto one.
        """
        folded = fold_spans(text) if folded is None else folded
        decoy_spans = [(m.start, m.end) for m in self._decoys.finditer(text, folded)]
        hits: list[EntityHit] = []
        for m in self._matcher.finditer(text, folded):
            ok = [a for a in m.payloads if a.accepts(m.matched, phenomenon)]
            if not ok:
                self.stats["rejected_case"] += 1
                continue
            ids = {a.entity_id for a in ok}
            if len(ids) > 1:
                self.stats["ambiguous"] += 1
                continue
            if any(s < m.end and m.start < e for s, e in decoy_spans):
                self.stats["decoy"] += 1
                continue
            if in_url(text, m.start, m.end):
                self.stats["in_url"] += 1
                continue
            al = ok[0]
            ent = self.entities[al.entity_id]
            hits.append(EntityHit(ent.entity_id, ent.category, m.start, m.end, m.matched, al.regex or al.text, al.lang))
        return hits

    def rows(self) -> list[dict[str, Any]]:
        """``entity_dictionary`` table rows (content columns)."""
        return [
            {
                "entity_id": e.entity_id,
                "name": e.name,
                "category": e.category,
                "phenomenon": e.phenomenon,
                "aliases": [a.as_json() for a in e.aliases],
                "decoys": list(e.decoys),
                "dictionary_version": self.label,
            }
            for e in sorted(self.entities.values(), key=lambda e: e.entity_id)
        ]


def _parse_alias(entity_id: str, lang: str, raw: Any) -> Alias:
    if isinstance(raw, str):
        return Alias(entity_id, raw, lang)
    if isinstance(raw, dict):
        unknown = set(raw) - {"text", "case_sensitive", "phenomena", "regex"}
        if unknown:
            raise ValueError(f"{entity_id}: unknown alias keys {sorted(unknown)}")
        phen = raw.get("phenomena")
        if phen is not None:
            bad = set(phen) - set(PHENOMENA)
            if bad:
                raise ValueError(f"{entity_id}: unknown phenomena {sorted(bad)} in alias {raw}")
            phen = frozenset(phen)
        if "regex" in raw:
            return Alias(entity_id, raw.get("text") or raw["regex"], lang, False, phen, raw["regex"])
        if not raw.get("text"):
            raise ValueError(f"{entity_id}: alias without text: {raw}")
        return Alias(entity_id, raw["text"], lang, bool(raw.get("case_sensitive", False)), phen)
    raise ValueError(f"{entity_id}: alias must be a string or a mapping, got {raw!r}")


def _context_aliases(entity_id: str, raw: Any) -> tuple[str, ...]:
    """``context_aliases``: a list of plain strings (any language); ValueError otherwise."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(a, str) and a.strip() for a in raw):
        raise ValueError(f"{entity_id}: context_aliases must be a list of non-empty strings, got {raw!r}")
    return tuple(raw)


def parse_entity_dictionary(data: dict[str, Any], *, sha: str = "", path: str = "") -> EntityDictionary:
    """Validate a parsed YAML document and build the dictionary.

    Raises ``ValueError`` naming the entity on: missing version, duplicate id, unknown category or
    phenomenon, an entity without aliases, unknown alias languages, or the same folded alias used
    by two entities whose phenomenon restrictions overlap (an unreviewable ambiguity).
    """
    version = str(data.get("version") or "")
    if not version:
        raise ValueError("entity dictionary has no version")
    entities: dict[str, Entity] = {}
    for raw in data.get("entities") or []:
        eid = raw.get("id")
        if not eid or eid in entities:
            raise ValueError(f"missing or duplicate entity id: {eid!r}")
        if raw.get("category") not in CATEGORIES:
            raise ValueError(f"{eid}: category must be one of {CATEGORIES}, got {raw.get('category')!r}")
        if raw.get("phenomenon") not in PHENOMENA:
            raise ValueError(f"{eid}: phenomenon must be one of {PHENOMENA}, got {raw.get('phenomenon')!r}")
        aliases_raw = raw.get("aliases") or {}
        bad = set(aliases_raw) - set(LANGS)
        if bad:
            raise ValueError(f"{eid}: alias languages must be es/en/pt, got {sorted(bad)}")
        aliases = [_parse_alias(eid, lang, a) for lang in LANGS for a in (aliases_raw.get(lang) or [])]
        if not aliases:
            raise ValueError(f"{eid}: no aliases")
        # the same spelling twice in one entity (e.g. "drones" in en and pt) is kept once
        seen: set[tuple] = set()
        unique = []
        for a in aliases:
            k = (a.regex or (a.text if a.case_sensitive else fold_phrase(a.text)), a.case_sensitive, a.phenomena)
            if k not in seen:
                seen.add(k)
                unique.append(a)
        entities[eid] = Entity(
            eid,
            str(raw.get("name") or eid),
            raw["category"],
            raw["phenomenon"],
            tuple(unique),
            tuple(raw.get("decoys") or ()),
            _context_aliases(eid, raw.get("context_aliases")),
        )
    if not entities:
        raise ValueError("entity dictionary is empty")
    owners: dict[str, list[Alias]] = {}
    for e in entities.values():
        for a in e.aliases:
            if not a.regex:
                owners.setdefault(fold_phrase(a.text), []).append(a)
    for key, als in owners.items():
        ids = {a.entity_id for a in als}
        if len(ids) < 2:
            continue
        for i, a in enumerate(als):
            for b in als[i + 1 :]:
                if a.entity_id == b.entity_id:
                    continue
                pa = a.phenomena if a.phenomena is not None else frozenset(PHENOMENA)
                pb = b.phenomena if b.phenomena is not None else frozenset(PHENOMENA)
                if pa & pb:
                    raise ValueError(
                        f"alias {key!r} is used by {a.entity_id} and {b.entity_id} in the same "
                        f"phenomena {sorted(pa & pb)}: restrict one with `phenomena`"
                    )
    return EntityDictionary(version=version, sha=sha, entities=entities, path=path)


def load_entity_dictionary(path: str | Path | None = None) -> EntityDictionary:
    """Load and validate ``entities.yaml`` (default: the reviewed file shipped with the package)."""
    p = Path(path) if path else DEFAULT_ENTITIES_PATH
    raw = p.read_bytes()
    return parse_entity_dictionary(yaml.safe_load(raw), sha=hashlib.sha256(raw).hexdigest(), path=str(p))


def hits_to_rows(
    hits: Iterable[EntityHit], *, doc_id: str, chunk_id: str, language: str | None, phenomenon: str | None, version: str
) -> list[dict[str, Any]]:
    """``entity_mentions`` rows for the hits of one passage."""
    return [
        {
            "entity_id": h.entity_id,
            "category": h.category,
            "doc_id": doc_id,
            "chunk_id": chunk_id,
            "char_start": h.start,
            "char_end": h.end,
            "matched": h.matched,
            "alias": h.alias,
            "alias_lang": h.alias_lang,
            "language": language,
            "phenomenon": phenomenon,
            "dictionary_version": version,
        }
        for h in hits
    ]
