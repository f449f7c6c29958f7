"""The ``deploy/`` folder holds together: the compose file is accepted by ``docker compose config``
(or Debian's ``docker-compose`` 1.29), and the compose file, the Helm values and the Kubernetes
manifests name commands, settings, images, volumes and secrets that exist.

What is not run here (no Docker daemon, no Kubernetes cluster, no ``helm`` binary): building the
image, starting the services, ``helm template``/``install`` and ``kubectl apply``. ``dagster
definitions validate`` of the code location with the deployment's settings is in
tests/assets/test_executor.py."""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

from assets.executor import CelerySettings
from radar_cli.main import app

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
RADAR_SERVICES = {"code", "webserver", "daemon", "worker", "api"}


def _compose_cli() -> list[str]:
    docker = shutil.which("docker")
    if docker and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0:
        return [docker, "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    pytest.skip("neither `docker compose` nor `docker-compose` is installed (apt-get install docker-compose)")


def _radar_commands() -> set[str]:
    names = {c.name or c.callback.__name__ for c in app.registered_commands}
    return names | {g.name for g in app.registered_groups}


def _celery_env_ok(env: dict) -> None:
    fields = {f"RADAR_CELERY_{name.upper()}" for name in CelerySettings.model_fields}
    unknown = {k for k in env if k.startswith("RADAR_CELERY_")} - fields
    assert not unknown, f"settings Radar does not read: {unknown}"


@pytest.fixture(scope="module")
def compose(tmp_path_factory) -> dict:
    """``docker compose config``'s resolved model of deploy/docker-compose.yml."""
    out = subprocess.run(
        [*_compose_cli(), "-f", str(DEPLOY / "docker-compose.yml"), "config"],
        cwd=DEPLOY,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin:/usr/local/bin", "RADAR_SHARED_DIR": str(tmp_path_factory.mktemp("shared"))},
    )
    assert out.returncode == 0, out.stderr
    return yaml.safe_load(out.stdout)


def test_compose_file_is_accepted_and_wires_every_process(compose):
    services = compose["services"]
    assert set(services) == {"postgres", "redis"} | RADAR_SERVICES
    assert "pgvector" in services["postgres"]["image"]
    envs = {name: services[name]["environment"] for name in RADAR_SERVICES}
    first = envs["code"]
    for name, env in envs.items():
        # one database (tables and Dagster's storage), one broker, one RADAR_HOME for every process
        for key in ("DATABASE_URL", "RADAR_PG_URL", "RADAR_EXECUTOR", "RADAR_CELERY_BROKER_URL", "RADAR_HOME"):
            assert env[key] == first[key], (name, key)
        _celery_env_ok(env)
        mounts = [str(v) for v in services[name]["volumes"]]
        assert any("radar-home" in m and "/data/radar" in m for m in mounts), (name, mounts)
    assert first["RADAR_EXECUTOR"] == "celery" and first["DATABASE_URL"].startswith("postgresql://")
    assert first["RADAR_PG_URL"].startswith("postgresql+psycopg2://")  # what dagster-postgres needs
    # the commands exist: radar subcommands and the workspace the webserver and daemon load
    commands = _radar_commands()
    for name in RADAR_SERVICES:
        cmd = " ".join(services[name]["command"])
        for word in ("worker", "serve"):
            if f"radar {word}" in cmd:
                assert word in commands
    assert "assets.definitions" in " ".join(services["code"]["command"])
    workspace = yaml.safe_load((DEPLOY / "workspace.yaml").read_text())
    grpc = workspace["load_from"][0]["grpc_server"]
    assert grpc["host"] == "code" and str(grpc["port"]) in " ".join(services["code"]["command"])


def test_dockerfile_copies_what_exists_and_installs_the_celery_extra():
    text = (DEPLOY / "Dockerfile").read_text()
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert "'.[celery]'" in text and "dagster-celery==0.29.27" in extras["celery"]
    for line in text.splitlines():
        if line.startswith("COPY "):
            for src in line.split()[1:-1]:
                assert (ROOT / src).exists(), src


def test_helm_values_and_manifests_name_what_exists():
    values = yaml.safe_load((DEPLOY / "helm" / "values.yaml").read_text())
    assert values["runLauncher"]["type"] == "K8sRunLauncher"
    assert values["postgresql"]["enabled"] is False  # Radar's PostgreSQL (pgvector) is external
    (dep,) = values["dagster-user-deployments"]["deployments"]
    assert dep["dagsterApiGrpcArgs"] == ["-m", "assets.definitions"]
    env = {e["name"]: e["value"] for e in dep["env"]}
    assert env["RADAR_EXECUTOR"] == "celery"
    _celery_env_ok(env)

    docs = [d for d in yaml.safe_load_all((DEPLOY / "k8s" / "radar.yaml").read_text()) if d]
    by_kind: dict[str, set[str]] = {}
    for d in docs:
        assert d["apiVersion"] and d["metadata"]["name"], d
        by_kind.setdefault(d["kind"], set()).add(d["metadata"]["name"])
    assert {"radar-worker", "radar-api", "radar-redis"} <= by_kind["Deployment"]
    assert "radar-postgres" in by_kind["StatefulSet"] and "radar-postgres" in by_kind["Service"]
    # every volume claim the chart's deployment and the manifests mount is declared
    claims = by_kind["PersistentVolumeClaim"]
    for v in dep["volumes"]:
        assert v["persistentVolumeClaim"]["claimName"] in claims
    (config,) = [d for d in docs if d["kind"] == "ConfigMap"]
    _celery_env_ok(config["data"])
    assert config["data"]["RADAR_CELERY_BROKER_URL"] == env["RADAR_CELERY_BROKER_URL"]
    commands = _radar_commands()
    for d in docs:
        if d["kind"] != "Deployment":
            continue
        for c in d["spec"]["template"]["spec"]["containers"]:
            cmd = " ".join(c.get("command", []))
            if cmd.startswith("radar "):
                assert cmd.split()[1] in commands, cmd
            for v in d["spec"]["template"]["spec"].get("volumes", []):
                assert v["persistentVolumeClaim"]["claimName"] in claims
