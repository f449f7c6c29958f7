"""GET /search: passage and document search (the retrieval service the agent's tools also use, for the dashboard)."""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query

from api.deps import ScopedRetrievalDep
from api.schemas import ErrorResponse, SearchResponse
from api.security import Read

router = APIRouter(tags=["search"], dependencies=[Read])  # scope: read


@router.get(
    "/search", response_model=SearchResponse, responses={409: {"model": ErrorResponse}, 400: {"model": ErrorResponse}}
)
def search(
    retrieval: ScopedRetrievalDep,
    q: Annotated[str, Query(min_length=2, max_length=300, description="Pregunta o consulta")],
    k: Annotated[int, Query(ge=1, le=10)] = 10,
    doc_id: Annotated[list[str] | None, Query(max_length=5, description="Restringir a estos documentos")] = None,
) -> SearchResponse:
    """Top documents (3) and passages (``k``) with ``similarity`` = raw cosine and ``score`` = policy score,
    from the caller's collections only (candidates restricted before ranking)."""
    if not q.strip() or len(q.strip()) < 2:
        raise HTTPException(400, detail={"code": "empty_query", "message": "la consulta está vacía"})
    t0 = time.perf_counter()
    docs = [d for d in doc_id or [] if d]
    passages = retrieval.search_passages(q, k, docs or None)
    documents = [] if docs else retrieval.search_documents(q, 3)
    return SearchResponse(
        query=q,
        documents=documents,
        passages=passages,
        latency_ms=round((time.perf_counter() - t0) * 1000, 2),
        identifiers=[] if docs else retrieval.question_identifiers(q),
    )
