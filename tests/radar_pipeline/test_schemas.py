"""The table contracts accept good rows and reject bad ones (read back from real PostgreSQL)."""

import pandera.polars as pa
import polars as pl
import pytest

from radar_pipeline.schemas import SCHEMAS


def _doc(**kw):
    row = dict(
        doc_id="a" * 16,
        primary_path="x.txt",
        format="txt",
        status="ok",
        reason=None,
        language="en",
        n_pages=1,
        n_chars=10,
    )
    row.update(kw)
    return row


def test_documents_contract():
    SCHEMAS["documents"].validate(
        pl.DataFrame([_doc(), _doc(doc_id="b" * 16, status="encrypted", reason="user password required")])
    )
    with pytest.raises((pa.errors.SchemaError, pa.errors.SchemaErrors)):
        SCHEMAS["documents"].validate(pl.DataFrame([_doc(status="corrupt", reason=None)]), lazy=True)
    with pytest.raises((pa.errors.SchemaError, pa.errors.SchemaErrors)):
        SCHEMAS["documents"].validate(pl.DataFrame([_doc(status="weird")]), lazy=True)


def test_chunks_contract():
    good = dict(chunk_id="d-0", doc_id="d", seq=0, text="hello", n_tokens=1, page_start=1, page_end=2)
    SCHEMAS["chunks"].validate(pl.DataFrame([good]))
    # a re-chunked passage whose text changed may carry a number other than its seq (history.assign_chunk_ids)
    SCHEMAS["chunks"].validate(pl.DataFrame([dict(good, chunk_id="d-7")]))
    for bad in (dict(good, chunk_id="e-0"), dict(good, text="nul\x00"), dict(good, page_end=0)):
        with pytest.raises((pa.errors.SchemaError, pa.errors.SchemaErrors)):
            SCHEMAS["chunks"].validate(pl.DataFrame([bad]), lazy=True)


def test_embeddings_contract_checks_unit_norm():
    ok = dict(text_sha="f" * 64, encoder="usem3", dim=512, norm=1.0)
    SCHEMAS["embeddings"].validate(pl.DataFrame([ok]))
    with pytest.raises((pa.errors.SchemaError, pa.errors.SchemaErrors)):
        SCHEMAS["embeddings"].validate(pl.DataFrame([dict(ok, norm=0.5)]), lazy=True)


def test_all_null_optional_columns_are_aligned_before_validation():
    """A clean corpus has no failed document: `reason` is entirely NULL and polars reads it as dtype
    Null; the contract check must cast it, not reject the table (seen on a fresh materialization)."""
    from assets.checks import align_null_columns

    frame = pl.DataFrame([_doc(), _doc(doc_id="b" * 16)]).with_columns(pl.lit(None).alias("reason"))
    assert frame.schema["reason"] == pl.Null
    SCHEMAS["documents"].validate(align_null_columns(frame, SCHEMAS["documents"]))
