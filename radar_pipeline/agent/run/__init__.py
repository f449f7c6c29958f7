"""The steps of a run, one module per role of the code (``runner.AgentRunner`` mixes them in and keeps
the sequence): ``state`` (bookkeeping), ``model_calls`` (the LLM loop's plumbing and degraded mode),
``guarding``, ``orchestrating`` (with the follow-up route), ``viewing``, ``answering``, ``verifying``,
``finishing``."""
