"""Index stores: FAISS (dense, on disk), BM25 (lexical, on disk) and pgvector (in PostgreSQL)."""
