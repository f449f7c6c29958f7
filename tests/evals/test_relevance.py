"""evals.relevance: tokens, n-grams, containment and grading across chunkings."""

from __future__ import annotations

import random
import time

import pytest

from evals.relevance import (
    JudgedPassageIndex,
    containment,
    passage_grade,
    tokenize,
    word_ngrams,
)
from tests.evals.support_text import words


# -- tokens and n-grams --------------------------------------------------------------------------
def test_tokenize_nfkc_lowercase_accents_kept():
    # NFKC folds the "ﬁ" ligature and full-width letters; accents stay; punctuation splits
    assert tokenize("La Política de ﬁnanciación, ＡＢＣ-2020!") == [
        "la",
        "política",
        "de",
        "financiación",
        "abc",
        "2020",
    ]
    assert tokenize("política") != tokenize("politica")
    assert tokenize("") == [] and tokenize(" ,.; ") == []


def test_tokenize_cjk_one_token_per_character():
    assert tokenize("美国军事 GPS卫星") == ["美", "国", "军", "事", "gps", "卫", "星"]


def test_word_ngrams_counts():
    # 7 tokens -> 7 - 5 + 1 = 3 five-grams
    assert word_ngrams("a b c d e f g") == {"a b c d e", "b c d e f", "c d e f g"}
    assert len(word_ngrams("a b c d e f g", n=2)) == 6
    assert word_ngrams("a b c d") == set()  # fewer than 5 tokens: no 5-gram
    # a repeated 5-gram counts once (sets)
    assert len(word_ngrams("x y z w v x y z w v")) == 5  # 6 windows, "x y z w v" twice
    with pytest.raises(ValueError):
        word_ngrams("a b", n=0)


# -- containment ---------------------------------------------------------------------------------
def test_containment_hand_computed_partial_overlap():
    a = words("w", 0, 100)  # 100 tokens -> 96 five-grams
    b = words("w", 50, 150)  # shares w50..w99: 5-grams starting at w50..w95 -> 46
    assert containment(a, b) == pytest.approx(46 / 96)
    assert containment(b, a) == pytest.approx(46 / 96)
    assert containment(a, a) == 1.0
    assert containment(a, words("z", 0, 100)) == 0.0


def test_containment_is_asymmetric_for_nested_chunks():
    small = words("w", 100, 150)  # 50 tokens, 46 grams, all inside big
    big = words("w", 0, 300)  # 296 grams
    assert containment(small, big) == 1.0
    assert containment(big, small) == pytest.approx(46 / 296)


def test_containment_ignores_case_spacing_and_punctuation():
    judged = "El escenario actual de amenaza se determina por la confrontación armada entre grupos."
    other = "el  escenario actual de AMENAZA, se determina\npor la confrontación armada entre grupos"
    assert containment(judged, other) == 1.0


def test_short_text_falls_back_to_exact_phrase_containment():
    title = "Inteligencia Artificial y Ciberdefensa"  # 4 tokens < 5
    body = "Capítulo 3. inteligencia artificial y ciberdefensa en el Perú y la región andina"
    assert containment(title, body) == 1.0  # whole phrase occurs, contiguous
    assert containment(title, "inteligencia artificial para la ciberdefensa y más") == 0.0
    assert containment(body, title) == 0.0  # the long text's 5-grams are not in a 4-word text
    assert containment("", body) == 0.0
    assert containment("  ...  ", body) == 0.0
    # token boundaries respected: "art" is not "artificial"
    assert containment("inteligencia art", body) == 0.0


# -- grading across chunk boundaries -------------------------------------------------------------
def test_passage_grade_different_chunk_boundaries():
    judged = [(words("w", 0, 200), 2), (words("w", 200, 400), 1), (words("w", 400, 600), 0)]
    # a small chunk inside the grade-2 judged chunk: containment(p, j) = 1 -> 2
    assert passage_grade(words("w", 50, 120), judged) == 2
    # a big chunk holding the whole grade-1 chunk and part of the grade-0: containment(j, p) = 1
    assert passage_grade(words("w", 190, 450), judged) == 1
    # a chunk holding both graded chunks entirely: highest grade wins
    assert passage_grade(words("w", 0, 400), judged) == 2
    # straddling half/half, w100..w299 (196 grams): shares w100..w199 = 96 grams with the grade-2
    # chunk and w200..w299 = 96 grams with the grade-1 chunk; 96/196 = 0.49 < 0.55 both ways -> 0
    # (the known blind spot of containment matching: a chunk cut across two judged ones)
    assert passage_grade(words("w", 100, 300), judged) == 0
    # w150..w349: shares w200..w349 = 146 of its 196 grams with the grade-1 chunk (0.745) -> 1
    assert passage_grade(words("w", 150, 350), judged) == 1
    # straddling, mostly inside the grade-1 chunk: w180..w379 shares w200..w379 = 176 grams of 196
    assert passage_grade(words("w", 180, 380), judged) == 1
    # unrelated text
    assert passage_grade(words("z", 0, 200), judged) == 0
    assert passage_grade("", judged) == 0


def test_passage_grade_threshold_boundary():
    # judged j: t0..t23 (24 tokens, 20 grams). passage p: t0..t14 + u0..u8 (24 tokens, 20 grams);
    # shared grams start at t0..t10 -> 11 -> containment 11/20 = 0.55 in both directions
    j = words("t", 0, 24)
    p = words("t", 0, 15) + " " + words("u", 0, 9)
    assert containment(p, j) == pytest.approx(0.55)
    assert passage_grade(p, [(j, 2)], threshold=0.55) == 2  # >= threshold matches
    assert passage_grade(p, [(j, 2)], threshold=0.56) == 0


def test_passage_grade_short_texts():
    judged = [("Inteligencia Artificial y Ciberdefensa", 1), (words("w", 0, 50), 2)]
    # a long passage containing the short judged title verbatim: containment(j, p) = 1
    assert passage_grade("Prólogo. Inteligencia artificial y ciberdefensa: retos del Perú", judged) == 1
    # a short passage inside a long judged passage: containment(p, j) = 1
    assert passage_grade("w10 w11 w12", judged) == 2
    assert passage_grade("w10 w12", judged) == 0  # not contiguous
    with pytest.raises(ValueError):
        passage_grade("x", [("y", -1)])


# -- the index -----------------------------------------------------------------------------------
def test_index_matches_brute_force_and_isolates_queries():
    rng = random.Random(0)
    vocab = [f"v{i}" for i in range(60)]
    judged = {
        f"q{k}": [(" ".join(rng.choices(vocab, k=rng.randint(3, 80))), rng.randint(0, 2)) for _ in range(8)]
        for k in range(4)
    }
    idx = JudgedPassageIndex()
    for q, lst in judged.items():
        for i, (text, grade) in enumerate(lst):
            idx.add(q, f"{q}-{i}", text, grade)
    assert idx.query_ids == list(judged)
    # retrieved passages: random windows cut from the judged texts of some query, plus noise
    for _ in range(300):
        q = rng.choice(list(judged))
        src = rng.choice(judged[rng.choice(list(judged))])[0].split()
        a = rng.randint(0, len(src) - 1)
        text = " ".join(src[a : a + rng.randint(1, 90)])
        brute = max((g for jt, g in judged[q] if max(containment(text, jt), containment(jt, text)) >= 0.55), default=0)
        assert idx.grade(q, text) == brute == passage_grade(text, judged[q])
    assert idx.grade("unknown", "v1 v2 v3 v4 v5") == 0
    assert idx.matches("unknown", "v1") == []


def test_index_matches_sorted_and_reports_directions():
    idx = JudgedPassageIndex()
    idx.add("q", "j-big", words("w", 0, 300), 1)
    idx.add("q", "j-small", words("w", 100, 200), 2)
    idx.add("q2", "j-other", words("w", 0, 300), 2)
    ms = idx.matches("q", words("w", 90, 210))  # holds all of j-small, inside j-big
    assert [m.judged_id for m in ms] == ["j-small", "j-big"]  # grade 2 first
    small, big = ms
    assert small.c_jp == 1.0 and small.containment == 1.0
    assert big.c_pj == 1.0 and big.c_jp == pytest.approx(116 / 296)
    assert idx.grade("q", words("w", 90, 210)) == 2
    assert idx.ideal_gains("q") == [1, 2]
    assert [j.judged_id for j in idx.judged("q2")] == ["j-other"]


def test_index_same_text_several_ids_and_queries():
    idx = JudgedPassageIndex()
    text = words("w", 0, 40)
    idx.add("q1", "doc-a-chunk-1", text, 2)
    idx.add("q1", "doc-b-chunk-1", text, 2)  # a near-duplicate document judged twice
    idx.add("q2", "doc-a-chunk-1", text, 0)  # the same text, another question, another grade
    assert {m.judged_id for m in idx.matches("q1", text)} == {"doc-a-chunk-1", "doc-b-chunk-1"}
    assert idx.grade("q1", text) == 2 and idx.grade("q2", text) == 0
    with pytest.raises(ValueError):
        idx.add("q1", "x", "t", 1.5)
    with pytest.raises(ValueError):
        JudgedPassageIndex(threshold=0)


def test_index_is_fast():
    rng = random.Random(1)
    vocab = [f"v{i}" for i in range(5000)]
    idx = JudgedPassageIndex()
    for q in range(25):
        for i in range(30):
            idx.add(f"q{q}", f"c{i}", " ".join(rng.choices(vocab, k=340)), rng.randint(0, 2))
    passages = [(f"q{q}", " ".join(rng.choices(vocab, k=380))) for q in range(25) for _ in range(10)]
    t0 = time.thread_time()  # CPU time of this thread: other processes' load does not count
    for q, text in passages:
        idx.grade(q, text)
    assert time.thread_time() - t0 < 1.0  # ~0.1 s measured for 250 passages
