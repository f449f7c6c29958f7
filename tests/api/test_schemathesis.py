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


def test_no_server_errors(db_service, capsys):
    schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(service=db_service))
    stats: dict[str, dict[int, int]] = {}
    operations = [r.ok() for r in schema.get_all_operations()]
    assert len(operations) >= 9
    for op, mode in [(op, mode) for op in operations for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)]:

        @given(case=op.as_strategy(generation_mode=mode))
        @settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        def run(case):
            response = case.call()
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
            f"\n[schemathesis] {len(stats)} operations, {total} requests, status codes: "
            + "; ".join(f"{k} {dict(sorted(v.items()))}" for k, v in sorted(stats.items()))
        )
