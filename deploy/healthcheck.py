"""The container's health probe: exit 0 when ``GET <url>`` answers 200 within the timeout, else 1.

Used by the image's ``HEALTHCHECK`` (deploy/Dockerfile) against the API's ``/health`` on
``http://127.0.0.1:8000/health`` (what ``radar serve`` listens on in deploy/docker-compose.yml and
deploy/k8s), and by the compose file for the Dagster webserver's ``/server_info``. Standard library
only: the slim image has no curl or wget. ``/health`` answers 200 whenever the process serves
requests (``status`` ``ok`` or ``degraded``: an index still building is not a dead container).

Usage: ``python deploy/healthcheck.py [URL] [--timeout SECONDS]`` (default URL above, 4 s).
"""

from __future__ import annotations

import argparse
import sys
import urllib.error
import urllib.request

DEFAULT_URL = "http://127.0.0.1:8000/health"


def probe(url: str, timeout: float) -> tuple[bool, str]:
    """``(healthy, what happened)``: healthy only on an HTTP 200 within ``timeout`` seconds."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status == 200, f"HTTP {r.status}"
    except urllib.error.HTTPError as exc:
        return False, f"HTTP {exc.code}"
    except (urllib.error.URLError, OSError) as exc:
        return False, f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("url", nargs="?", default=DEFAULT_URL)
    ap.add_argument("--timeout", type=float, default=4.0)
    args = ap.parse_args(argv)
    ok, what = probe(args.url, args.timeout)
    print(f"{'healthy' if ok else 'unhealthy'}: {args.url} → {what}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
