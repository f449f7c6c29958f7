"""The text folds, one home, each named for what it is for.

* ``fold_spans`` — **length-preserving** (``len(fold_spans(t)) == len(t)``): lower case, accents
  stripped, every dash to ``-``, typographic quotes to ``'``/``"``; a span found in the folded
  text is the same span in the original (precompute mentions, evidence quotes, dashboard places).
* ``fold_phrase`` — ``fold_spans`` with whitespace runs collapsed (dictionary keys).
* ``fold_question`` — for matching a question against rules and gazetteers: NFKC, format
  characters removed, accents stripped, lower case, whitespace collapsed (router, visualizer,
  writer). Not length-preserving.
* ``fold_secure`` — ``fold_question`` plus Cyrillic/Greek/Latin look-alikes mapped to Latin, so
  homoglyph attacks meet the same rules; only the guards (``agent.guards``) use it.
* ``fold_tokens`` — the BM25 fold (NFKD, lower case, combining marks out) applied before
  tokenisation (``stores.bm25_store``) and to glossary keys.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["fold_spans", "fold_phrase", "fold_question", "fold_secure", "fold_tokens"]

_WS = re.compile(r"\s+")

# --------------------------------------------------------------------------- length-preserving
_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d\u00ad"
_QUOTES = "\u2018\u2019\u201a\u201b\u2032\u00b4`"
_DQUOTES = "\u201c\u201d\u201e\u201f\u00ab\u00bb\u2033"


class _FoldTable(dict):
    """``str.translate`` table computed lazily, one character → one character."""

    def __missing__(self, code: int) -> int:
        ch = chr(code)
        if ch in _DASHES:
            out = "-"
        elif ch in _QUOTES:
            out = "'"
        elif ch in _DQUOTES:
            out = '"'
        else:
            base = unicodedata.normalize("NFD", ch)
            if len(base) > 1 and all(unicodedata.category(c) == "Mn" for c in base[1:]):
                base = base[0]
            if len(base) != 1:
                base = ch
            low = base.lower()
            out = low if len(low) == 1 else base
        self[code] = ord(out)
        return self[code]


_TABLE = _FoldTable()
for _c in range(0x250):  # warm the common range once
    _TABLE[_c]


def fold_spans(text: str) -> str:
    """Lower-case, strip accents, unify dashes and quotes; ``len(fold_spans(t)) == len(t)`` always."""
    return text.translate(_TABLE)


def fold_phrase(phrase: str) -> str:
    """Folded phrase with whitespace runs collapsed to one space and ends stripped (dictionary keys)."""
    return _WS.sub(" ", fold_spans(phrase)).strip()


# --------------------------------------------------------------------------- questions and guards
_CONFUSABLES = str.maketrans(
    {
        # Cyrillic
        "а": "a",
        "е": "e",
        "о": "o",
        "р": "p",
        "с": "c",
        "у": "y",
        "х": "x",
        "і": "i",
        "ј": "j",
        "ѕ": "s",
        "ԁ": "d",
        "һ": "h",
        "ӏ": "l",
        "к": "k",
        "м": "m",
        "т": "t",
        "в": "b",
        "н": "h",
        "г": "r",
        "п": "n",
        "А": "A",
        "В": "B",
        "Е": "E",
        "К": "K",
        "М": "M",
        "Н": "H",
        "О": "O",
        "Р": "P",
        "С": "C",
        "Т": "T",
        "Х": "X",
        "І": "I",
        "Ј": "J",
        "Ѕ": "S",
        # Greek
        "α": "a",
        "ε": "e",
        "ι": "i",
        "ο": "o",
        "ρ": "p",
        "τ": "t",
        "υ": "u",
        "ν": "v",
        "κ": "k",
        "χ": "x",
        "Α": "A",
        "Β": "B",
        "Ε": "E",
        "Ζ": "Z",
        "Η": "H",
        "Ι": "I",
        "Κ": "K",
        "Μ": "M",
        "Ν": "N",
        "Ο": "O",
        "Ρ": "P",
        "Τ": "T",
        "Υ": "Y",
        "Χ": "X",
        # Latin look-alikes
        "ɡ": "g",
        "ı": "i",
        "ſ": "s",
        "ℓ": "l",
    }
)


def fold_question(text: str) -> str:
    """NFKC, format characters out, accents stripped, lower case, spaces collapsed."""
    t = unicodedata.normalize("NFKC", text)
    t = "".join(c for c in t if unicodedata.category(c) != "Cf")
    t = unicodedata.normalize("NFKD", t)
    t = "".join(c for c in t if not unicodedata.combining(c))
    return _WS.sub(" ", t.lower()).strip()


def fold_secure(text: str) -> str:
    """NFKC, format characters out, look-alikes to Latin, accents stripped, lower case, spaces collapsed."""
    t = unicodedata.normalize("NFKC", text)
    t = "".join(c for c in t if unicodedata.category(c) != "Cf")
    t = t.translate(_CONFUSABLES)
    t = unicodedata.normalize("NFKD", t)
    t = "".join(c for c in t if not unicodedata.combining(c))
    return _WS.sub(" ", t.lower()).strip()


# --------------------------------------------------------------------------- BM25 tokens
def fold_tokens(text: str) -> str:
    """Lower-case and strip combining accents (``Antisatélite`` → ``antisatelite``), the BM25 fold."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))
