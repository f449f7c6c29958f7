"""Property-based fuzzing of every operation in the OpenAPI document (schemathesis): no 5xx, ever.

Runs in-process through ASGI against the real app (real index, real PostgreSQL). Examples per
operation and mode (positive, negative) are bounded (``RADAR_SCHEMATHESIS_EXAMPLES``, default 12) to keep the suite fast.
Schemathesis' own pytest plugin does not run under pytest 9, so the operations are driven with
Hypothesis directly (``operation.as_strategy()``).
"""

from __future__ import annotations

import os

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from api.main import create_app

pytestmark = pytest.mark.slow  # hypothesis-generated requests against the whole API

EXAMPLES = int(os.environ.get("RADAR_SCHEMATHESIS_EXAMPLES", "12"))


def _fuzz(app, capsys, headers: dict | None = None, label: str = "open") -> dict[str, dict[int, int]]:
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    stats: dict[str, dict[int, int]] = {}
    operations = [r.ok() for r in schema.get_all_operations()]
    assert len(operations) >= 9
    for op, mode in [(op, mode) for op in operations for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)]:

        @given(case=op.as_strategy(generation_mode=mode))
        @settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        def run(case):
            response = case.call(headers=headers)
            seen = stats.setdefault(f"{case.method.upper()} {case.path}", {})
            seen[response.status_code] = seen.get(response.status_code, 0) + 1
            assert response.status_code < 500, (case.method, case.path, response.status_code, response.text[:300])

        try:
            run()
        except Unsatisfiable:  # negative mode on an operation without parameters: nothing to break
            assert mode is GenerationMode.NEGATIVE
    with capsys.disabled():
        total = sum(sum(v.values()) for v in stats.values())
        print(
            f"\n[schemathesis:{label}] {len(stats)} operations, {total} requests, status codes: "
            + "; ".join(f"{k} {dict(sorted(v.items()))}" for k, v in sorted(stats.items()))
        )
    return stats


def test_no_server_errors(db_service, capsys):
    _fuzz(create_app(service=db_service), capsys)


def test_no_server_errors_with_authentication_on(db_service, agent_engine, capsys):
    """The same fuzzing with authentication required and a key holding every scope: still no 5xx
    (the scope checks, the audit log and the rate limiter run on every generated request)."""
    from api.security import AccessControl, AuthSettings
    from radar_pipeline.access import KeyStore

    token, _ = KeyStore(agent_engine).create("fuzz-admin", ["read", "chat", "review", "admin"])
    app = create_app(
        service=db_service, access=AccessControl.required(AuthSettings(rate_per_minute=60000, rate_burst=10000))
    )
    stats = _fuzz(app, capsys, headers={"Authorization": f"Bearer {token}"}, label="auth")
    assert any(200 in codes for codes in stats.values())  # the key really opened the endpoints
