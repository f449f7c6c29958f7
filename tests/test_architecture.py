"""The house rules of ARCHITECTURE.md, checked on the source.

* the import contracts in ``pyproject.toml`` (``[tool.importlinter]``) hold — run with the real
  ``lint-imports`` so a new cycle or an upward import fails CI;
* one home per idea: the phenomena are defined only in ``radar_pipeline.vocabulary``, text folds
  only in ``radar_pipeline.textfold``, and only the guards use the security fold; country and
  group names only in the gazetteer and the entity dictionary (``precompute/data``).
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

from radar_pipeline.agent.reading.understanding import name_sets
from radar_pipeline.textfold import fold_question

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


# --------------------------------------------------------------------------- one vocabulary of names
_REGEX_SYNTAX = re.compile(r"\\[wbsd][*+?]?|\(\?(?:[:=!]|<[=!])|[()?*+^$\\\[\]]")


def _literal_entries(node: ast.AST) -> list[str] | None:
    """The entries a literal defines: a collection's string elements (and dict keys), or a string
    constant split at newlines, commas, semicolons and ``|`` (a data block or a regex alternation)."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        elts = node.elts
    elif isinstance(node, ast.Dict):
        elts = [k for k in node.keys if k is not None]
    elif isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [e for e in re.split(r"[\n,;|]", node.value) if e.strip()]
    else:
        return None
    return [e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]


def _named_entries(entries: list[str], index: dict[str, str]) -> set[str]:
    """Keys of the name sets that ``entries`` name exactly (regex syntax removed, folded)."""
    return {index[k] for e in entries if (k := fold_question(_REGEX_SYNTAX.sub("", e)).strip()) in index}


def _name_index() -> dict[str, str]:
    """Every folded name of a country or organisation → its name-set key (``understanding.name_sets``)."""
    return {n: ns.key for ns in name_sets() for n in ns.names if len(n) >= 3}


def _name_lists(path: Path, tree: ast.AST, index: dict[str, str], limit: int) -> list[str]:
    """``path:NAME`` (the variable a literal is assigned to, else ``path:literal:<its first
    entry>``, stable when lines move) of each literal that names ``limit`` or more
    countries/organisations."""
    owner = {
        id(n.value): t.id
        for n in ast.walk(tree)
        if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None
        for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
        if isinstance(t, ast.Name)
    }
    out = []
    for node in ast.walk(tree):
        entries = _literal_entries(node)
        if entries is None:
            continue
        if len(_named_entries(entries, index)) >= limit:
            out.append(f"{path}:{owner.get(id(node)) or 'literal:' + str(entries[0]).strip()}")
    return out


# Not vocabularies: the keys of one source's own columns, linked to the dictionary there.
_SOURCE_SCHEMAS = {
    # the Amazon Underworld presence records name their groups by column key (cdf, emc, eln, …);
    # GROUPS maps each key to its entity id, _GROUP_ALIASES the keys' spellings, _COUNTRY the
    # spellings of the records' country column
    "radar_pipeline/precompute/presence.py:GROUPS",
    "radar_pipeline/precompute/presence.py:_GROUP_ALIASES",
    "radar_pipeline/precompute/presence.py:_COUNTRY",
    # the armed_presence table's column comment lists those keys
    "radar_pipeline/precompute/tables.py:literal:cdf",
    # the dashboard's short labels of those keys ("ELN", "EMC")
    "radar_pipeline/precompute/view_evidence.py:GROUP_LABELS",
}


def test_country_and_group_names_live_in_the_gazetteer_and_dictionary():
    # countries (with demonyms and metonyms) live in precompute/data/places.yaml, armed groups and
    # organisations in precompute/data/entities.yaml; code reads them through
    # understanding.name_sets. A literal naming 4+ of them anywhere else is a second vocabulary
    # (the router's own _COUNTRIES/_GROUPS blocks were one).
    index = _name_index()
    assert {"rusia", "russian", "eln", "disidencias"} <= set(index), "the name sets lost their demonyms or aliases"
    old_block = ast.parse('_C = """\nrusia,ruso|russia|russian\nchina,chino|chinese\nfarc|farc\neln|eln\n"""')
    assert _name_lists(Path("old_router.py"), old_block, index, 4), "the check no longer sees a gazetteer block"
    regex = ast.parse(r'_D = re.compile(r"(?:china|rusia\w*|iran|ukraine)")')
    assert _name_lists(Path("x.py"), regex, index, 4), "the check no longer sees a regex alternation of names"
    found = [hit for path, tree in _sources() for hit in _name_lists(path.relative_to(ROOT), tree, index, 4)]
    assert [f for f in found if f not in _SOURCE_SCHEMAS] == [], found
