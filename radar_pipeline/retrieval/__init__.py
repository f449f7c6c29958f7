"""Retrieval: candidate generation, fusion and the passage/document policy."""
