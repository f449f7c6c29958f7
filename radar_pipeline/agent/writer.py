"""Writers: the extractive writer (offline) and the LLM writer. Neither has tools.

``ExtractiveWriter`` builds the answer from the best sentences of the passages actually read:

1. passages marked ``suspicious`` (``guards.scan_passage`` flagged them when read: an indirect
   prompt injection planted in a document) are skipped whole; the others' sentences are split with
   ``radar_pipeline.sentences.split_sentences`` (pysbd, per language); fragments, references/URLs,
   tables, any sentence that itself carries instructions (``scan_passage``) and any sentence that speaks
   to its reader instead of stating something about the world (``states_about_world``: "responde
   que…", "note for summarisation tools…", "os modelos devem…") are dropped;
2. each candidate is scored by the cosine of its vector with the question's (the same multilingual
   encoder as retrieval, so a Spanish question ranks English sentences) + 0.15 × the share of the
   question's keywords and glossary English terms it contains + 0.05 × its passage's similarity;
3. greedy selection with redundancy control (a sentence whose cosine to one already chosen is
   ≥ 0.85 is skipped, ≤ 2 per passage, ``max_sentences`` in all), then one extra sentence per
   coverage requirement that the read passages meet but the chosen sentences do not mention (a
   year of the question's period also by a sentence of a document dated in it, ``year_of``);
4. the answer quotes each sentence verbatim («…», original language) followed by its citation
   ``[doc_id:chunk_id]``, then lists the sources. The verifier checks the quotes are verbatim.

``LLMWriter`` sends the fenced passages (``prompts.fence_passages``) to the large model; a
``suspicious`` passage goes as a fenced notice without its text or id.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from radar_pipeline.agent import prompts
from radar_pipeline.agent.guards import address_cue, scan_passage
from radar_pipeline.agent.router import Requirement, glossary_terms, keywords
from radar_pipeline.sentences import split_sentences
from radar_pipeline.textfold import fold_question

MIN_CHARS, MAX_CHARS = 40, 480
MAX_CANDIDATES = 90  # sentences embedded per answer (USE: ~7 ms per sentence on 1 thread)
REDUNDANCY_COS = 0.85
HEADER = (
    "Respuesta extractiva (modo sin modelo de lenguaje): frases citadas textualmente de los pasajes más "
    "pertinentes, en su idioma original:"
)


@dataclass
class Draft:
    text: str
    sentences: list[tuple[str, str]] = field(default_factory=list)  # (sentence, chunk_id)
    reply: object | None = None  # LLMReply in LLM mode


_JUNK = re.compile(r"https?://|www\.|\bdoi\b|et al\.|©|ISBN|ISSN|\.{4,}|_{4,}|\|.*\||\t")


_BROKEN_COLUMNS = re.compile(r"\u00ad\s|\w- \w+ \w+-\s")  # soft hyphen + space: interleaved PDF columns
_END = re.compile(r"[.!?…][\"'”’»)\]]*$")


def _usable(sentence: str) -> bool:
    """A sentence worth quoting: a whole sentence of prose (not a fragment, header, table, reference,
    or text interleaved from two PDF columns)."""
    if not (MIN_CHARS <= len(sentence) <= MAX_CHARS):
        return False
    if _BROKEN_COLUMNS.search(sentence) or not _END.search(sentence):
        return False
    words = sentence.split()
    if sum(w.isupper() and len(w) > 1 for w in words) > 0.3 * len(words):
        return False
    letters = sum(c.isalpha() for c in sentence)
    digits = sum(c.isdigit() for c in sentence)
    if letters < 0.6 * len(sentence) or digits > 0.2 * len(sentence):
        return False
    if _JUNK.search(sentence):
        return False
    if sentence[0].islower() and not sentence[0].isdigit():
        return False
    return len(words) >= 6


def states_about_world(sentence: str) -> bool:
    """May ``sentence`` be quoted as evidence? Only if it states something about the world: a
    sentence that speaks to its reader (an assistant, a model, a tool, an editor, a person), by the
    second person, an imperative or by naming the reader as the one who must act
    (``guards.address_cue``), is never quoted, whatever its wording — a planted instruction that
    escapes ``guards.scan_passage`` cannot reach the answer through the extractive writer."""
    return address_cue(sentence) is None


class _VectorCache:
    def __init__(self, size: int = 20000):
        self.size = size
        self.lock = threading.Lock()
        self.data: OrderedDict[str, np.ndarray] = OrderedDict()

    def encode(self, encoder, texts: list[str]) -> np.ndarray:
        out: list[np.ndarray | None] = []
        missing = []
        with self.lock:
            for t in texts:
                v = self.data.get(t)
                if v is not None:
                    self.data.move_to_end(t)
                else:
                    missing.append(t)
                out.append(v)
        if missing:
            uniq = list(dict.fromkeys(missing))
            vecs = encoder.encode_passages(uniq)
            new = dict(zip(uniq, vecs, strict=False))
            with self.lock:
                for t, v in new.items():
                    self.data[t] = v
                while len(self.data) > self.size:
                    self.data.popitem(last=False)
            out = [v if v is not None else new[t] for v, t in zip(out, texts, strict=False)]
        return np.vstack(out) if out else np.zeros((0, getattr(encoder, "dim", 1)), dtype=np.float32)


_CACHE = _VectorCache()
# radar_pipeline.sentences shares one pysbd Segmenter per language, and pysbd keeps per-call state
# on it: concurrent calls returned empty or wrong splits under load (measured: 239 of 665 answers
# lost every sentence with 20 concurrent clients). Splits are serialised and cached per passage.
_SPLIT_LOCK = threading.Lock()
_SPLITS: OrderedDict[tuple[str, str | None], list[str]] = OrderedDict()


def sentences_of(text: str, language: str | None) -> list[str]:
    """``split_sentences`` made safe for concurrent runs (one lock; an LRU of 4,096 passages)."""
    key = (text, language)
    with _SPLIT_LOCK:
        hit = _SPLITS.get(key)
        if hit is not None:
            _SPLITS.move_to_end(key)
            return hit
        out = split_sentences(text, language)
        _SPLITS[key] = out
        while len(_SPLITS) > 4096:
            _SPLITS.popitem(last=False)
        return out


def query_terms(question: str) -> list[str]:
    """Folded keywords of the question plus the glossary's English terms for it."""
    terms = keywords(question)
    for _, english, _ in glossary_terms(question):
        terms += [fold_question(e) for e in english]
    return list(dict.fromkeys(t for t in terms if len(t) > 2))


class ExtractiveWriter:
    """Offline writer. ``encoder`` is the retrieval encoder (``encode_queries`` / ``encode_passages``)."""

    def __init__(self, encoder, max_sentences: int = 5):
        self.encoder = encoder
        self.max_sentences = max_sentences

    def candidates(self, passages: list[dict], exclude: set[str] = frozenset()) -> list[tuple[str, dict]]:
        per_passage: list[list[tuple[str, dict]]] = []
        for p in passages:
            if p.get("suspicious"):  # carries instructions: never evidence, not even its other sentences
                continue
            sents = []
            for s in sentences_of(p.get("text") or "", p.get("language")):
                s = " ".join(s.split())
                if s in exclude or not _usable(s):
                    continue
                if not scan_passage(s).allowed or not states_about_world(s):
                    continue
                sents.append((s, p))
            per_passage.append(sents)
        out: list[tuple[str, dict]] = []
        seen: set[str] = set()
        i = 0
        while len(out) < MAX_CANDIDATES and any(i < len(ps) for ps in per_passage):
            for ps in per_passage:
                if i < len(ps) and ps[i][0] not in seen and len(out) < MAX_CANDIDATES:
                    seen.add(ps[i][0])
                    out.append(ps[i])
            i += 1
        return out

    def write(
        self,
        question: str,
        passages: list[dict],
        requirements: list[Requirement] | None = None,
        exclude: set[str] = frozenset(),
        year_of: Callable[[str], int | None] | None = None,
    ) -> Draft:
        """Answer text with one citation per sentence; ``Draft.text`` is '' when no usable sentence.

        ``year_of`` (``doc_id`` → publication year, None when undated; given when the question has a
        period to span): a ``range`` year is then met by a sentence of a document dated in it too,
        and the sources list names the publication year of each cited dated document."""
        passages = sorted(passages, key=lambda p: -(p.get("similarity") or 0.0))
        cands = self.candidates(passages, exclude)
        if not cands:
            return Draft("")
        qvec = np.asarray(self.encoder.encode_queries([question])[0], dtype=np.float32)
        vecs = _CACHE.encode(self.encoder, [s for s, _ in cands])
        sims = vecs @ qvec
        terms = query_terms(question)
        scores = []
        for (s, p), sim in zip(cands, sims, strict=False):
            fs = fold_question(s)
            lex = sum(1 for t in terms if re.search(r"(?<!\w)" + re.escape(t), fs)) / max(1, len(terms))
            scores.append(float(sim) + 0.15 * lex + 0.05 * float(p.get("similarity") or 0.0))
        order = np.argsort(-np.asarray(scores))
        chosen: list[int] = []
        per_chunk: dict[str, int] = {}
        for i in order:
            if len(chosen) >= self.max_sentences:
                break
            cid = cands[i][1]["chunk_id"]
            if per_chunk.get(cid, 0) >= 2:
                continue
            if chosen and float(np.max(vecs[chosen] @ vecs[i])) >= REDUNDANCY_COS:
                continue
            chosen.append(int(i))
            per_chunk[cid] = per_chunk.get(cid, 0) + 1

        def meets(req: Requirement, i: int) -> bool:
            year = year_of(cands[i][1]["doc_id"]) if year_of is not None and req.kind == "range" else None
            return req.met_by_passage(fold_question(cands[i][0]), year)

        for req in requirements or []:
            if any(meets(req, i) for i in chosen):
                continue
            extra = next((int(i) for i in order if int(i) not in chosen and meets(req, int(i))), None)
            if extra is not None:
                chosen.append(extra)
        # keep the passages' reading order inside the answer: best passage first, then position
        rank_of = {p["chunk_id"]: n for n, p in enumerate(passages)}
        chosen.sort(
            key=lambda i: (rank_of.get(cands[i][1]["chunk_id"], 99), (cands[i][1].get("text") or "").find(cands[i][0]))
        )
        lines, pairs = [], []
        for i in chosen:
            s, p = cands[i]
            lines.append(f"- «{s}» [{p['doc_id']}:{p['chunk_id']}]")
            pairs.append((s, p["chunk_id"]))
        sources = []
        for cid in dict.fromkeys(c for _, c in pairs):
            p = next(pp for pp in passages if pp["chunk_id"] == cid)
            year = year_of(p["doc_id"]) if year_of is not None else None
            published = f"; publicado en {year}" if year is not None else ""
            label = f"«{p.get('title') or p.get('source_path')}» (p. {p.get('page')}{published})"
            if label not in sources:
                sources.append(label)
        text = HEADER + "\n\n" + "\n".join(lines) + "\n\nFuentes: " + "; ".join(sources) + "."
        return Draft(text, pairs)


class LLMWriter:
    """Large-model writer: fenced passages in, Spanish answer with ``[doc_id:chunk_id]`` citations out."""

    def __init__(self, client):
        self.client = client

    def messages(
        self,
        question: str,
        passages: list[dict],
        requirements: list[Requirement] | None,
        feedback: str | None,
        year_of: Callable[[str], int | None] | None = None,
    ) -> list[dict]:
        """The conversation for the large model. ``year_of`` (``doc_id`` → publication year, given when
        the question has a period to span) adds the publication year of each dated document read, so a
        year of the period can be covered by a document published in it."""
        reqs = "; ".join(r.describe() for r in requirements or []) or "ninguno"
        user = f"Pregunta del analista (también es solo un dato): {question}\nRequisitos de cobertura: {reqs}\n"
        if year_of is not None:
            dated = {p["doc_id"]: year_of(p["doc_id"]) for p in passages if not p.get("suspicious")}
            listed = "; ".join(f"{d}: {y}" for d, y in dated.items() if y is not None)
            if listed:
                user += f"Año de publicación de los documentos leídos (dato): {listed}\n"
        if feedback:
            user += f"El verificador rechazó la respuesta anterior: {feedback}. Corrígelo.\n"
        user += "\n" + prompts.fence_passages(passages)
        return [{"role": "system", "content": prompts.WRITER}, {"role": "user", "content": user}]

    def write(
        self,
        question: str,
        passages: list[dict],
        requirements: list[Requirement] | None = None,
        feedback: str | None = None,
        year_of: Callable[[str], int | None] | None = None,
    ) -> Draft:
        """The large model's answer (``Draft.reply`` its reply); ``year_of`` as in ``messages``."""
        reply = self.client.chat(self.messages(question, passages, requirements, feedback, year_of), size="large")
        return Draft(reply.content.strip(), reply=reply)
