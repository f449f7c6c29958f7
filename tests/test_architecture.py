"""The house rules of ARCHITECTURE.md, checked on the source.

* the import contracts in ``pyproject.toml`` (``[tool.importlinter]``) hold — run with the real
  ``lint-imports`` so a new cycle or an upward import fails CI;
* one home per idea: the phenomena are defined only in ``radar_pipeline.vocabulary``, text folds
  only in ``radar_pipeline.textfold``, and only the guards use the security fold.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("radar_pipeline", "radar_cli", "assets", "resources", "api", "evals")


def _sources():
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            if "node_modules" not in path.parts:
                yield path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def test_import_contracts_hold():
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    assert exe, "lint-imports (import-linter) is not installed: pip install -e '.[test]'"
    res = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]


def test_phenomena_defined_once():
    owners = []
    for path, tree in _sources():
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Name) and t.id in ("PHENOMENA", "Phenomenon"):
                        owners.append(f"{path.relative_to(ROOT)}:{t.id}")
                value = node.value
                if isinstance(value, (ast.Tuple, ast.List, ast.Set)):
                    consts = {e.value for e in value.elts if isinstance(e, ast.Constant)}
                    if {"ai_military", "space_security", "territorial"} <= consts:
                        owners.append(f"{path.relative_to(ROOT)}:literal")
    rel = {o for o in owners if not o.startswith("radar_pipeline/vocabulary.py")}
    # evals/datasets.py names the benchmark's own codes (F1/F2/F3), derived from the vocabulary
    assert rel <= {"evals/datasets.py:PHENOMENA"}, rel


def test_folds_live_in_textfold():
    defs, secure_users = [], []
    for path, tree in _sources():
        rel = str(path.relative_to(ROOT))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name.lstrip("_") in ("fold", "fold_phrase", "fold_text"):
                defs.append(f"{rel}:{node.name}")
            if isinstance(node, ast.ImportFrom) and node.module == "radar_pipeline.textfold":
                if any(a.name == "fold_secure" for a in node.names):
                    secure_users.append(rel)
            if isinstance(node, ast.ImportFrom) and node.module == "radar_pipeline.agent.guards":
                assert not any(a.name == "fold" for a in node.names), f"{rel} imports the guards' fold"
    assert [d for d in defs if not d.startswith("radar_pipeline/textfold.py")] == [], defs
    assert secure_users == ["radar_pipeline/agent/guards.py"], secure_users
