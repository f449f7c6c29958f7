"""One-regex dictionary matching over text folded with ``textfold.fold_spans``.

Folding is *length-preserving*: every character maps to exactly one character (``É`` → ``e``,
``ñ`` → ``n``, every dash → ``-``, typographic quotes → ``'``), so a span found in the folded text
is the same span in the original text. No offset table is needed to map matches back.

A :class:`PhraseMatcher` compiles all phrases of a dictionary into **one** regular expression
shaped like a trie (shared prefixes are factored, so the engine never tries thousands of
alternatives at a position), anchored on word boundaries: ``(?<!\\w)(...)(?!\\w)``. Matching a text
is then one ``finditer`` over the folded text — linear in practice — and returns leftmost-longest,
non-overlapping matches. A space inside a phrase matches any run of whitespace (PDF line breaks).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from radar_pipeline.textfold import fold_phrase, fold_spans

_WS = re.compile(r"\s+")

__all__ = ["PhraseMatcher", "Match", "mask_spans", "in_url"]

_URLISH = re.compile(r"://|www\.|@|\.(?:org|com|gov|net|int|edu|co|br|pe|ec|info|io)(?:\b|/)", re.IGNORECASE)


def in_url(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` sits inside a URL or e-mail address (the whitespace-delimited
    token around it contains ``://``, ``www.``, ``@`` or a ``.org``/``.com``/… domain)."""
    lo = start
    while lo > 0 and not text[lo - 1].isspace() and start - lo < 200:
        lo -= 1
    hi = end
    while hi < len(text) and not text[hi].isspace() and hi - end < 200:
        hi += 1
    return bool(_URLISH.search(text[lo:hi]))


def mask_spans(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` with every ``[start, end)`` span replaced by spaces (offsets unchanged)."""
    parts: list[str] = []
    pos = 0
    for start, end in sorted(spans):
        start = max(start, pos)
        if end <= start:
            continue
        parts.append(text[pos:start])
        parts.append(" " * (end - start))
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


def _trie_regex(phrases: Sequence[str]) -> str:
    """Regex source matching exactly the given folded phrases, factored as a trie.

    Longer continuations are tried before stopping (greedy), so with the trailing ``(?!\\w)`` the
    engine returns the longest phrase that ends on a word boundary.
    """
    trie: dict = {}
    for p in phrases:
        node = trie
        for ch in p:
            node = node.setdefault(ch, {})
        node[""] = True

    def emit(node: dict) -> str:
        ends = "" in node
        branches = []
        for ch in sorted(k for k in node if k):
            piece = r"\s+" if ch == " " else re.escape(ch)
            branches.append(piece + emit(node[ch]))
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if ends:
            return "(?:" + body + ")?"
        return body

    return emit(trie)


@dataclass(frozen=True)
class Match:
    """One dictionary hit: ``[start, end)`` in the original text, the original ``matched`` form,
    the folded ``key`` of the phrase and the payloads registered for that key."""

    start: int
    end: int
    matched: str
    key: str
    payloads: tuple[Any, ...]


class PhraseMatcher:
    """Many phrases, one compiled regex. ``add(phrase, payload)`` then ``compile()``.

    Phrases are folded (:func:`fold_phrase`); several payloads may share one folded key (e.g. the
    same alias for two places, or a case-sensitive and an insensitive spelling) — the caller
    filters them. Raw regular expressions over folded text can be added with ``add_regex`` for the
    rare pattern aliases (e.g. ``cosmos\\s?\\d{3,4}``); they are alternated after the trie.
    """

    def __init__(self) -> None:
        self._payloads: dict[str, list[Any]] = {}
        self._regexes: list[tuple[str, Any]] = []
        self._rx: re.Pattern | None = None

    def add(self, phrase: str, payload: Any) -> None:
        key = fold_phrase(phrase)
        if not key:
            raise ValueError(f"empty phrase after folding: {phrase!r}")
        self._payloads.setdefault(key, []).append(payload)
        self._rx = None

    def add_regex(self, pattern: str, payload: Any) -> None:
        re.compile(pattern)  # fail early on a bad pattern
        self._regexes.append((pattern, payload))
        self._rx = None

    def __len__(self) -> int:
        return len(self._payloads) + len(self._regexes)

    @property
    def keys(self) -> list[str]:
        return sorted(self._payloads)

    def compile(self) -> PhraseMatcher:
        parts = []
        if self._payloads:
            parts.append("(?P<t>" + _trie_regex(sorted(self._payloads)) + ")")
        for i, (pattern, _) in enumerate(self._regexes):
            parts.append(f"(?P<r{i}>{pattern})")
        body = "|".join(parts) if parts else "(?!x)x"
        self._rx = re.compile(r"(?<!\w)(?:" + body + r")(?!\w)")
        return self

    def finditer(self, text: str, folded: str | None = None) -> Iterator[Match]:
        """Matches in ``text`` (``folded`` may be passed when already computed, same length)."""
        if self._rx is None:
            self.compile()
        if folded is None:
            folded = fold_spans(text)
        for m in self._rx.finditer(folded):
            s, e = m.span()
            if m.group("t") if self._payloads else None:
                key = _WS.sub(" ", folded[s:e])
                payloads = tuple(self._payloads.get(key, ()))
            else:
                idx = next(int(k[1:]) for k, v in m.groupdict().items() if v is not None and k.startswith("r"))
                key = self._regexes[idx][0]
                payloads = (self._regexes[idx][1],)
            if payloads:
                yield Match(s, e, text[s:e], key, payloads)
