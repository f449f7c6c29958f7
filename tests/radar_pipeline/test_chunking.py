from radar_pipeline.chunking import chunk_pages, count_tokens


def _prose(n: int) -> str:
    return " ".join(f"Sentence number {i} talks about orbital debris and satellites." for i in range(n))


def test_chunks_respect_budget_and_sentence_boundaries():
    text = _prose(200)
    chunks = chunk_pages("doc", [(1, text)], language="en", budget=100, overlap=0.15)
    assert len(chunks) > 5
    for c in chunks:
        assert c.n_tokens <= 100
        assert c.text.startswith("Sentence number") and c.text.endswith("satellites.")  # whole sentences
    assert [c.chunk_id for c in chunks[:3]] == ["doc-0", "doc-1", "doc-2"]


def test_overlap_is_previous_chunks_last_whole_sentences():
    chunks = chunk_pages("doc", [(1, _prose(60))], language="en", budget=100, overlap=0.15)
    for prev, nxt in zip(chunks, chunks[1:], strict=False):
        last_sentence = prev.text.split("Sentence number")[-1]
        assert nxt.text.startswith("Sentence number" + last_sentence)  # 11 tokens ≤ 15 = 0.15 × 100
    # no overlap when disabled
    plain = chunk_pages("doc", [(1, _prose(60))], language="en", budget=100, overlap=0.0)
    assert sum(c.n_sentences for c in plain) == 60


def test_pages_are_tracked_across_chunks():
    chunks = chunk_pages("d", [(1, _prose(5)), (2, _prose(5)), (3, "")], language="en", budget=40, overlap=0)
    assert chunks[0].page_start == 1 and chunks[-1].page_end == 2
    assert all(c.page_start <= c.page_end for c in chunks)


def test_tabular_records_are_packed_whole_and_capped():
    records = [(i, f"municipio: M{i}\ndepartamento: Nariño\neventos: {i}") for i in range(1, 5001)]
    chunks = chunk_pages("t", records, language="es", tabular=True, budget=100, tabular_max_chunks=400)
    assert len(chunks) == 400
    assert all("municipio: M" in c.text and c.text.count("municipio:") == c.n_sentences for c in chunks)
    assert chunks[0].page_start == 1


def test_overlong_sentence_is_split_at_words():
    text = "word " * 1200
    chunks = chunk_pages("x", [(1, text)], language="en", budget=500)
    assert len(chunks) >= 3 and all(c.n_tokens <= 500 for c in chunks)


def test_count_tokens():
    assert count_tokens("Hola, mundo.") == 4
    assert chunk_pages("e", [], language=None) == []


def test_spanish_abbreviations_do_not_end_chunks():
    sent = "El Sr. Gómez habló con la Dra. Ruiz sobre la Res. 0123 de las FF. AA. en el mpio. de Tumaco. "
    chunks = chunk_pages("s", [(1, sent * 30)], language="es", budget=60, overlap=0)
    for c in chunks:
        assert c.text.startswith("El Sr. Gómez") and c.text.endswith("Tumaco.")
