"""The settings registry (radar_pipeline.config): every environment variable the code reads is
declared once, and README's table and .env.example are what the registry generates."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from radar_pipeline import config

ROOT = Path(__file__).resolve().parents[1]
CODE_DIRS = ("radar_pipeline", "api", "assets", "resources", "radar_cli", "evals")
# A whole string that names a variable (a prefix such as "RADAR_LLM_" ends with "_" and is no name).
NAME = re.compile(r"(?:RADAR_[A-Z0-9_]*[A-Z0-9]|DATABASE_URL)")
CONFIG_FILES = ("dagster.yaml", "Makefile", "workspace.yaml")


def names_in_source(source: str) -> set[str]:
    """Every string literal of ``source`` that is exactly a variable name: what ``os.environ.get``,
    ``os.getenv``, ``os.environ[...]``, an ``env={...}`` dict, a constant or ``env()`` read by."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and NAME.fullmatch(node.value):
            found.add(node.value)
    return found


def settings_classes_in_source(source: str, known: set[str]) -> set[str]:
    """Names of the classes of ``source`` that read the environment: a ``BaseSettings`` subclass, or a
    subclass of a class in ``known`` (a registered settings class)."""
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef):
            bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
            if "BaseSettings" in bases or bases & known:
                out.add(node.name)
    return out


def _code_files():
    for d in CODE_DIRS:
        yield from sorted((ROOT / d).rglob("*.py"))


def _declared() -> set[str]:
    return {s.name for s in config.settings_registry()}


def test_every_variable_named_in_code_is_declared():
    declared = _declared()
    missing = {}
    for path in _code_files():
        for name in names_in_source(path.read_text(encoding="utf-8")) - declared:
            missing.setdefault(name, []).append(str(path.relative_to(ROOT)))
    for name_ in CONFIG_FILES + tuple(str(p.relative_to(ROOT)) for p in (ROOT / "deploy").rglob("*") if p.is_file()):
        text = (ROOT / name_).read_text(encoding="utf-8", errors="replace")
        for name in set(NAME.findall(text)) - declared:
            missing.setdefault(name, []).append(name_)
    assert not missing, f"read in code but declared nowhere (radar_pipeline/config.py): {missing}"


def test_every_settings_class_is_registered():
    registered = {path.split(":")[1]: path for path, _ in config.SETTINGS_CLASSES}
    unregistered = []
    for path in _code_files():
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for cls in settings_classes_in_source(path.read_text(encoding="utf-8"), set(registered)):
            if f"{module}:{cls}" not in registered.values() and cls != "RadarSettings":
                unregistered.append(f"{module}:{cls}")
    assert not unregistered, f"settings classes missing from config.SETTINGS_CLASSES: {unregistered}"
    # RadarSettings only composes the concern classes: it declares nothing of its own
    names = set()
    for field_name, info in config.RadarSettings.model_fields.items():
        names.update(config._field_names(config.RadarSettings, field_name, info))
    assert names <= _declared()


def test_each_declaration_is_complete_and_unique():
    registry = config.settings_registry()
    assert len({s.name for s in registry}) == len(registry)
    for s in registry:
        assert s.description, f"{s.name} has no description (a docstring under its field)"
        assert s.type and s.component, s.name
    by_name = {s.name: s for s in registry}
    assert by_name["RADAR_LLM_TIMEOUT_S"].unit == "s"
    assert by_name["RADAR_RERANK_BUDGET_MINUTES"].unit == "min"
    assert by_name["RADAR_CELERY_VISIBILITY_TIMEOUT"].unit == "s"
    assert by_name["RADAR_WORKERS"].default == "2"
    assert by_name["RADAR_INDEX_BACKEND"].type == "`faiss` \\| `pgvector`"
    assert by_name["DATABASE_URL"].source == by_name["RADAR_DATABASE_URL"].source  # one field, two names


def test_readme_table_is_generated_from_the_registry():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme == config.readme_with_settings(readme), (
        "README's settings table is stale: run `radar settings --write`"
    )


def test_env_example_is_generated_from_the_registry():
    text = (ROOT / ".env.example").read_text(encoding="utf-8")
    assert text == config.settings_env_example(), ".env.example is stale: run `radar settings --write`"
    for s in config.settings_registry():
        assert f"# {s.name}={s.default}\n" in text


@pytest.mark.parametrize(
    "source,expected",
    [
        ('import os\nx = os.environ.get("RADAR_NEW_SWITCH")', {"RADAR_NEW_SWITCH"}),
        ('import os\nx = os.getenv("RADAR_LATENCY_BUDGET_MS", "5")', {"RADAR_LATENCY_BUDGET_MS"}),
        ('import os\nx = os.environ["DATABASE_URL"]', {"DATABASE_URL"}),
        ('FLAG = "RADAR_FAULT_X"\nimport os\ny = os.environ.get(FLAG)', {"RADAR_FAULT_X"}),
        ('env = {"RADAR_CHILD_VAR": "1"}', {"RADAR_CHILD_VAR"}),
        ('def f():\n    """Reads RADAR_HOME and the RADAR_LLM_ prefix (prose)."""', set()),
        ('p = "RADAR_LLM_"\nq = "radar_home"', set()),
    ],
)
def test_scanner_finds_every_kind_of_read(source, expected):
    assert names_in_source(source) == expected


def test_scanner_finds_settings_classes():
    source = (
        "from pydantic_settings import BaseSettings\n"
        "class LatencySettings(BaseSettings):\n    budget_ms: int = 5\n"
        "class Sub(EncoderSpec):\n    pass\n"
        "class Plain:\n    pass\n"
    )
    assert settings_classes_in_source(source, {"EncoderSpec"}) == {"LatencySettings", "Sub"}


def test_a_new_undeclared_variable_fails_the_check(monkeypatch):
    """Declaring is the fix: the same name passes once it is one line of DIRECT_SETTINGS."""
    name = "RADAR_EXAMPLE_NEW_SWITCH"
    assert name not in _declared()
    extra = config.Setting(name, "bool", "false", "", "a switch nobody declared yet", "API: agent")
    monkeypatch.setattr(config, "DIRECT_SETTINGS", config.DIRECT_SETTINGS + (extra,))
    assert name in _declared()
    assert f"| `{name}` | bool | `false` |" in config.settings_markdown()


def test_a_name_declared_twice_is_refused(monkeypatch):
    dup = config.Setting("RADAR_HOME", "path", "", "", "again", "somewhere")
    monkeypatch.setattr(config, "DIRECT_SETTINGS", config.DIRECT_SETTINGS + (dup,))
    with pytest.raises(ValueError, match="RADAR_HOME is declared twice"):
        config.settings_registry()


def test_env_reads_only_declared_names(monkeypatch):
    monkeypatch.delenv("RADAR_EXECUTOR", raising=False)
    assert config.env("RADAR_EXECUTOR") == "multiprocess"  # the declared default
    monkeypatch.setenv("RADAR_EXECUTOR", "celery")
    assert config.env("RADAR_EXECUTOR") == "celery"
    monkeypatch.setenv("RADAR_SHARED_DIR", "/data/shared")  # a settings-class variable: raw value
    assert config.env("RADAR_SHARED_DIR") == "/data/shared"
    monkeypatch.delenv("RADAR_COLLECTIONS_FILE", raising=False)
    assert config.env("RADAR_COLLECTIONS_FILE") is None
    for undeclared in ("RADAR_NOT_A_SETTING", "RADAR_HOMEDIR", "HOME"):
        with pytest.raises(KeyError, match="not declared"):
            config.env(undeclared)
