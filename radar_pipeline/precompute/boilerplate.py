"""Blank the text printed on every page (addresses, phone lines, certification stamps) before matching.

Two sources, both reviewed in ``data/boilerplate.yaml``:

- **patterns**: regular expressions over folded text (e.g. the Ombudsman's postal address
  "Carrera 9 No. 16-21 - Bogotá D.C." that the F3 alerts print on every page), run only on
  passages containing one of the ``triggers`` words (a substring test, for speed);
- **repeated lines**: a line (digits and spaces normalized) that occurs on at least
  ``repeated_line_min_pages`` pages *and* at least ``repeated_line_min_share`` of a document's
  pages is a running header/footer.

Blanking replaces characters with spaces, so offsets into the passage stay valid for the mentions
found in what is left.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from radar_pipeline.precompute.text import mask_spans
from radar_pipeline.textfold import fold_spans

__all__ = ["Boilerplate", "load_boilerplate", "split_page_markers", "DEFAULT_BOILERPLATE_PATH"]

DEFAULT_BOILERPLATE_PATH = Path(__file__).with_name("data") / "boilerplate.yaml"
_PAGE_MARKER = re.compile(r"<!--\s*P[áa]gina\s*\d+\s*-->", re.IGNORECASE)
_DIGITS = re.compile(r"\d+")
_SPACES = re.compile(r"\s+")


def split_page_markers(text: str) -> list[str]:
    """Pages of a text that carries ``<!-- Página N -->`` markers (the Codefest extractions); the
    whole text as one page otherwise."""
    parts = _PAGE_MARKER.split(text)
    return [p for p in parts if p.strip()] or [text]


def _line_key(line: str) -> str:
    return _SPACES.sub(" ", _DIGITS.sub("#", fold_spans(line))).strip()


@dataclass
class Boilerplate:
    """Compiled boilerplate rules (see module doc)."""

    version: str
    sha: str
    pattern: re.Pattern
    min_pages: int = 3
    min_share: float = 0.3
    min_chars: int = 8
    triggers: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"boilerplate:{self.version}@{self.sha[:8]}"

    def repeated_lines(self, pages: Sequence[str]) -> frozenset[str]:
        """Normalized lines that repeat on enough pages of one document to be headers/footers."""
        if len(pages) < self.min_pages:
            return frozenset()
        counts: Counter[str] = Counter()
        for page in pages:
            counts.update({k for k in (_line_key(line) for line in page.splitlines()) if len(k) >= self.min_chars})
        need = max(self.min_pages, self.min_share * len(pages))
        return frozenset(k for k, n in counts.items() if n >= need)

    def spans(self, text: str, folded: str | None = None, repeated: Iterable[str] = ()) -> list[tuple[int, int]]:
        """``[start, end)`` spans of ``text`` that are boilerplate."""
        folded = fold_spans(text) if folded is None else folded
        spans = []
        if not self.triggers or any(t in folded for t in self.triggers):
            spans = [m.span() for m in self.pattern.finditer(folded) if m.end() > m.start()]
        repeated = set(repeated)
        if repeated:
            pos = 0
            for line in text.split("\n"):
                if _line_key(line) in repeated:
                    spans.append((pos, pos + len(line)))
                pos += len(line) + 1
        return spans

    def mask(self, text: str, folded: str | None = None, repeated: Iterable[str] = ()) -> tuple[str, str, int]:
        """``(masked_text, masked_folded, n_spans)``: the boilerplate replaced by spaces in both."""
        folded = fold_spans(text) if folded is None else folded
        spans = self.spans(text, folded, repeated)
        if not spans:
            return text, folded, 0
        return mask_spans(text, spans), mask_spans(folded, spans), len(spans)


def load_boilerplate(path: str | Path | None = None) -> Boilerplate:
    """Load and compile ``boilerplate.yaml``; raises ``ValueError`` on a bad pattern or missing version."""
    p = Path(path) if path else DEFAULT_BOILERPLATE_PATH
    raw = p.read_bytes()
    data = yaml.safe_load(raw)
    if not data.get("version"):
        raise ValueError("boilerplate file has no version")
    patterns = data.get("patterns") or []
    try:
        rx = re.compile("|".join(f"(?:{x})" for x in patterns) or r"(?!x)x", re.MULTILINE)
    except re.error as err:
        raise ValueError(f"bad boilerplate pattern: {err}") from err
    return Boilerplate(
        version=str(data["version"]),
        sha=hashlib.sha256(raw).hexdigest(),
        pattern=rx,
        min_pages=int(data.get("repeated_line_min_pages", 3)),
        min_share=float(data.get("repeated_line_min_share", 0.3)),
        min_chars=int(data.get("repeated_line_min_chars", 8)),
        triggers=tuple(str(t) for t in data.get("triggers") or ()),
    )
