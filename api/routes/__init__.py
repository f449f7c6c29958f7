"""Routers: chat, search, documents, aggregates, health."""
