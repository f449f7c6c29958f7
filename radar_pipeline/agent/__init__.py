"""Radar's agent: the run behind ``POST /chat`` (no FastAPI, no Dagster here).

A small explicit state machine (``runner.AgentRunner``; layout: ``reading`` reads the question,
``roles`` act on it, the runner and ``service`` sit on top): input guard → orchestrator (route +
search formulations) → analyst (retrieval tools, then a writer without tools) and/or visualizer →
verifier (citation check in code, faithfulness) → output guard. Works offline (deterministic
guard, rule router, extractive writer) or against any OpenAI-compatible endpoint configured by
``RADAR_LLM_*`` environment variables (``llm.LLMSettings``). Every step is traced in PostgreSQL
(``trace.TraceStore``).
"""
