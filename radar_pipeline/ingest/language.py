"""Deterministic language identification for English, Spanish and Portuguese.

Counts stopwords that belong to only one of the three languages (shared words such as "de",
"que", "a", "se" are ignored), plus a small bonus for letters only one language uses (ñ; ã õ ç).
No model, no randomness: the same text always gives the same answer.
"""

from __future__ import annotations

import re

__all__ = ["detect_language", "language_scores", "STOPWORDS", "MIN_STOPWORD_HITS"]

_EN = """the of and to in is that for it with as was on are by this be from or an which at have has
not were their its these been we they can will would should between than also more such into other
but there been our who what when where how may must only over about after under through during""".split()
_ES = """el la los las de del y en a no que por con para una un se su sus es al lo como más pero fue son ha
han este esta estos estas entre sobre también sin ya o según desde cuando muy hasta donde ni porque
le les otro otra otros cual sido ser está están hay durante contra mediante dicho dicha""".split()
_PT = """o os a as da do das dos e em no na nos nas que por com para uma um se seu sua seus suas é ao
aos não mais pelo pela pelos pelas foi são também entre sobre como ou mas já até quando muito isso
este esta estes estas foram ser está estão há durante contra através dessa desse nessa nesse""".split()

STOPWORDS: dict[str, frozenset[str]] = {"en": frozenset(_EN), "es": frozenset(_ES), "pt": frozenset(_PT)}
_ALL = STOPWORDS["en"] | STOPWORDS["es"] | STOPWORDS["pt"]
# Words that are stopwords in exactly one language carry the signal.
_EXCLUSIVE: dict[str, str] = {}
for _w in _ALL:
    _langs = [k for k, v in STOPWORDS.items() if _w in v]
    if len(_langs) == 1:
        _EXCLUSIVE[_w] = _langs[0]

# Minimum number of exclusive stopword hits for the winner; below it the text is "too little".
MIN_STOPWORD_HITS = 3
_MAX_CHARS = 200_000
_WORD_RE = re.compile(r"[^\W\d_]+")


def language_scores(text: str) -> dict[str, float]:
    """Exclusive-stopword counts per language ('en', 'es', 'pt') over the first 200,000 chars."""
    raw = text[:_MAX_CHARS]
    sample = raw.lower()
    scores = {"en": 0.0, "es": 0.0, "pt": 0.0}
    tokens = _WORD_RE.findall(raw)
    # In mixed-case text, ALL-CAPS tokens are acronyms ("UN Charter" is not Spanish "un").
    mixed_case = sum(1 for t in tokens if not t.isupper()) >= 0.5 * max(1, len(tokens))
    for w in tokens:
        if w.isupper() and (mixed_case or len(w) == 1):
            continue  # acronyms and flags: "UN Charter", "CURRENT: Y" are not Spanish "un", "y"
        lang = _EXCLUSIVE.get(w.lower())
        if lang is not None:
            scores[lang] += 1.0
    # Letters used by only one language (weak evidence, capped so they cannot outvote words).
    scores["es"] += min(sample.count("ñ"), 5) * 0.5
    scores["pt"] += min(sample.count("ã") + sample.count("õ") + sample.count("ç"), 5) * 0.5
    return scores


def detect_language(text: str | None, *, min_hits: int = MIN_STOPWORD_HITS) -> str | None:
    """Return 'en', 'es' or 'pt' for ``text``, or None.

    None when the text is empty/too short (the winning language has fewer than ``min_hits``
    exclusive stopword hits) or when no language clearly wins (top score < 1.2 × runner-up).
    Only the first 200,000 characters are read.
    """
    if not text:
        return None
    scores = language_scores(text)
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    (best, s1), (_, s2) = ranked[0], ranked[1]
    if s1 < min_hits or s1 < 1.2 * s2:
        return None
    return best
