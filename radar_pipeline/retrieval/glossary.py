"""Deterministic Spanish→English query expansion from a reviewed domain glossary.

The glossary (``data/glossary_es_en.tsv``) maps Spanish terms and phrases of the three phenomena
to their English equivalents ("desechos orbitales" → "orbital debris", "NBQR" → "CBRN"). Matching
is case- and accent-folded on word boundaries, longest phrase first, non-overlapping. The result
feeds the lexical ranker (BM25 cannot match a Spanish question to English text on its own) and,
optionally, the dense query.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from radar_pipeline.textfold import fold_tokens

GLOSSARY_VERSION = "glossary-es-en-1"
GLOSSARY_PATH = Path(__file__).with_name("data") / "glossary_es_en.tsv"
# Unreviewed single-term lexicon induced from the multilingual encoder (evals/induce_lexicon.py):
# folded Spanish BM25 token → folded English token; used only where a configuration asks for it.
INDUCED_LEXICON_PATH = Path(__file__).with_name("data") / "lexicon_induced_es_en.tsv"


@dataclass(frozen=True)
class GlossaryEntry:
    spanish: str
    english: tuple[str, ...]
    domain: str


@lru_cache(maxsize=4)
def load_glossary(path: Path = GLOSSARY_PATH) -> tuple[GlossaryEntry, ...]:
    """Parse the TSV (``#`` comments). Raises ``ValueError`` naming a malformed line."""
    entries = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 3 or not parts[0].strip() or not parts[1].strip():
            raise ValueError(f"{path.name}:{n}: expected 'spanish<TAB>english|...<TAB>domain'")
        entries.append(
            GlossaryEntry(
                parts[0].strip(), tuple(e.strip() for e in parts[1].split("|") if e.strip()), parts[2].strip()
            )
        )
    return tuple(entries)


@lru_cache(maxsize=4)
def _matcher(path: Path = GLOSSARY_PATH) -> tuple[re.Pattern, dict[str, GlossaryEntry]]:
    entries = load_glossary(path)
    by_key = {fold_tokens(e.spanish): e for e in entries}
    keys = sorted(by_key, key=len, reverse=True)  # longest first: alternation picks the longest phrase
    rx = re.compile(r"(?<!\w)(" + "|".join(re.escape(k) for k in keys) + r")(?!\w)")
    return rx, by_key


def glossary_matches(question: str, path: Path = GLOSSARY_PATH) -> list[GlossaryEntry]:
    """Glossary entries found in ``question``, in order of appearance (non-overlapping)."""
    rx, by_key = _matcher(path)
    return [by_key[m.group(1)] for m in rx.finditer(fold_tokens(question))]


def expand_query(question: str, path: Path = GLOSSARY_PATH) -> str:
    """English terms for the Spanish terms of ``question`` (space-joined, deduplicated, in order)."""
    seen: dict[str, None] = {}
    for entry in glossary_matches(question, path):
        for term in entry.english:
            seen.setdefault(term, None)
    return " ".join(seen)


@lru_cache(maxsize=4)
def load_induced_lexicon(path: Path = INDUCED_LEXICON_PATH) -> dict[str, str]:
    """Folded Spanish token → folded English token from the induced lexicon TSV
    (``spanish<TAB>english<TAB>cosine``, ``#`` comments); empty when the file is absent. Raises
    ``ValueError`` naming a malformed line."""
    if not path.is_file():
        return {}
    out: dict[str, str] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) < 2 or not parts[0] or not parts[1]:
            raise ValueError(f"{path.name}:{n}: expected 'spanish<TAB>english<TAB>cosine'")
        out[parts[0]] = parts[1]
    return out


def induced_terms(tokens: list[str], path: Path = INDUCED_LEXICON_PATH) -> list[str]:
    """English tokens the induced lexicon gives for ``tokens`` (folded BM25 tokens of a question),
    deduplicated, in order."""
    lex = load_induced_lexicon(path)
    seen: dict[str, None] = {}
    for t in tokens:
        if t in lex:
            seen.setdefault(lex[t], None)
    return list(seen)
