"""``radar serve`` and ``radar trace RUN_ID`` (registered in ``radar_cli.main``).

They start the API (``api.main``) and read the agent's trace store, so they live above both.
"""

from __future__ import annotations

import json
import sys


def serve(host: str = "127.0.0.1", port: int = 8000) -> None:
    """Start the agent API (FastAPI under uvicorn). Offline mode unless ``RADAR_LLM_BASE_URL`` is set.

    Docs at ``http://HOST:PORT/docs``; blocks until interrupted.
    """
    import uvicorn

    from api.main import create_app

    uvicorn.run(create_app(), host=host, port=port, log_level="info")


def trace(run_id: str, as_json: bool = False) -> int:
    """Print the stored trace of one /chat run. Returns a process exit code (0 found, 1 missing, 2 no DB)."""
    from radar_pipeline.agent.service import AgentService

    service = AgentService()
    store = service.store()
    if store is None:
        print("error: PostgreSQL is not available (DATABASE_URL or the embedded server)", file=sys.stderr)
        return 2
    data = store.load(run_id.strip())
    if data is None:
        print(f"error: no trace for run {run_id}", file=sys.stderr)
        return 1
    if as_json:
        print(json.dumps(data, ensure_ascii=False, indent=1, default=str))
    else:
        from radar_pipeline.agent.trace import format_trace

        print(format_trace(data))
    return 0
