"""The package's layers: data flows one way (docs/design.md, *Layers*).

    python -m pytest -q tests/test_layers.py

Each top-level module or subpackage of ``apollo_restore`` has a layer (:data:`LAYERS`); a module
may import from its own layer and those below it, never from one above (``if TYPE_CHECKING:``
imports count: a type is an edge too). An import of the package inside a function hides an edge,
so it is allowed only where start-up time asks for it — the CLI (``apollo-restore --help`` must
not load torch) and the package's ``__init__`` (``import apollo_restore`` runs before every CLI
command) — and there only with the reason given: once, in a ``Lazy imports:`` paragraph of the
docstring of the CLI's package or of the package's ``__init__`` (:data:`LAZY_REASON`), or for one
import, in a comment on its line or on the line above its run of imports.
"""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass
from pathlib import Path

import apollo_restore

PACKAGE = Path(apollo_restore.__file__).resolve().parent

#: Layer of each top-level module or subpackage (key: its name; ``__init__`` is the package's own
#: module, the Python API). Lower layers never import higher ones; one layer may import itself.
LAYERS = {
    "errors": 0,  # numbered messages, used everywhere
    "config": 0,  # YAML → typed dataclasses, used by train, scale and the CLI
    "hint": 0,  # the length hint of a gap (a value type every layer reads and writes)
    "schema": 0,  # the declared schema of every file a folder, job or tool reads (pydantic models, bounds)
    "version": 0,  # the package's version, named in what every layer writes
    "inputs": 0,  # the one input layer: bounded, strict-UTF-8 reads of files and stdin, used everywhere
    "data": 1,  # readers, Document, normalisation, splits, the text index
    "fim": 2,  # FIM examples, layouts, tokenisers
    "model": 3,  # networks and checkpoints
    "train": 4,  # the training loop
    "restoration": 5,  # requests and the driver, the members and their ensemble, presentation, the predict job
    "ngram": 3,  # classical language models (n-gram counts, the unbounded-order model); restorers in restoration
    "scale": 5,  # large-model recipes: HF fine-tuning and FSDP (on train), a vLLM restorer (on restoration)
    "evaluate": 6,  # metrics, gap sets, reports over any restorer
    "retrieve": 6,  # parallel passages and provenance over the text index; retrieval-augmented filling
    "attribution": 6,  # dates and places of a text (n-gram model, calibration); its dated parallels over retrieve
    "web": 7,  # HTTP API and page over restore and retrieve
    "tune": 7,  # fits a model folder's weights, demotions and calibration on validation (over restore, evaluate)
    "cli": 8,  # commands over everything, `serve` included
    "__main__": 8,  # `python -m apollo_restore` → cli
    "__init__": 8,  # the Python API: restore(), provenance(), load_restorer()
}
#: Where a function-local import of the package is allowed (with its reason given).
LAZY_ALLOWED = {"cli", "__init__"}
#: Where each of those gives the reason of all its function-local imports, once: the file whose
#: docstring holds a paragraph beginning :data:`LAZY_PARAGRAPH`.
LAZY_REASON = {"cli": "cli/__init__.py", "__init__": "__init__.py"}
LAZY_PARAGRAPH = "Lazy imports:"


@dataclass(frozen=True)
class Import:
    """One import of ``apollo_restore`` code.

    Attributes:
        path: the importing file, relative to the package folder.
        line: its 1-based line.
        target: the dotted module (or package attribute) imported.
        local: inside a function.
        explained: a comment on its lines, or on the line above its run of consecutive imports.
    """

    path: str
    line: int
    target: str
    local: bool
    explained: bool

    def __str__(self) -> str:
        return f"src/apollo_restore/{self.path}:{self.line}: {self.target}"


def layer_key(dotted: str) -> str:
    """The :data:`LAYERS` key of a dotted module under ``apollo_restore`` (an attribute of the
    package's ``__init__``, such as ``__version__``, is ``__init__``)."""
    parts = dotted.split(".")
    if len(parts) == 1:
        return "__init__"
    name = parts[1]
    if name in LAYERS or (PACKAGE / name).is_dir() or (PACKAGE / f"{name}.py").is_file():
        return name
    return "__init__"


def _module_of(path: str) -> str:
    """Dotted module name of a file relative to the package folder (a package: its own name)."""
    parts = ["apollo_restore", *Path(path).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _targets(node: ast.Import | ast.ImportFrom, path: str) -> list[str]:
    """The ``apollo_restore`` modules (or package attributes) one import statement names."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "apollo_restore"]
    base = node.module or ""
    if node.level:  # relative: resolved against the importing module's package
        package = _module_of(path).split(".")
        if not path.endswith("__init__.py"):
            package = package[:-1]
        base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
    if base.split(".")[0] != "apollo_restore":
        return []
    if base == "apollo_restore":  # `from apollo_restore import data` names a subpackage
        return [f"apollo_restore.{a.name}" for a in node.names]
    return [base]


def imports_of(source: str, path: str) -> list[Import]:
    """Every import of the package in one file's source (``path``: relative to the package folder)."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    comment_lines = {t.start[0] for t in tokens if t.type == tokenize.COMMENT}
    lines = source.splitlines()

    def comment_only(line: int) -> bool:
        return line in comment_lines and lines[line - 1].lstrip().startswith("#")

    found: list[Import] = []

    def visit(body: list[ast.stmt], local: bool) -> None:
        run_start = None  # first line of the current run of consecutive import statements
        for stmt in body:
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                run_start = run_start or stmt.lineno
                own = any(n in comment_lines for n in range(stmt.lineno, stmt.end_lineno + 1))
                explained = own or comment_only(run_start - 1)
                found.extend(Import(path, stmt.lineno, t, local, explained) for t in _targets(stmt, path))
                continue
            run_start = None
            inner = local or isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
            for child in ast.iter_child_nodes(stmt):
                if isinstance(child, (ast.ExceptHandler, ast.match_case)):
                    visit(child.body, inner)
            for field in ("body", "orelse", "finalbody"):
                block = getattr(stmt, field, None)
                if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                    visit(block, inner)

    visit(ast.parse(source).body, False)
    return found


def _package_imports() -> list[Import]:
    out = []
    for file in sorted(PACKAGE.rglob("*.py")):
        rel = file.relative_to(PACKAGE).as_posix()
        out.extend(imports_of(file.read_text(encoding="utf-8"), rel))
    return out


def upward(imp: Import) -> bool:
    """Whether an import reaches a layer above the importing module's."""
    return LAYERS[layer_key(_module_of(imp.path))] < LAYERS[layer_key(imp.target)]


def gives_lazy_reason(source: str) -> bool:
    """Whether a module's docstring has a paragraph beginning :data:`LAZY_PARAGRAPH`."""
    doc = ast.get_docstring(ast.parse(source)) or ""
    return any(part.strip().startswith(LAZY_PARAGRAPH) for part in doc.split("\n\n"))


def hidden(imp: Import) -> bool:
    """Whether an import is function-local where that is not allowed, or without its reason."""
    if not imp.local:
        return False
    key = layer_key(_module_of(imp.path))
    if key not in LAZY_ALLOWED:
        return True
    reason = PACKAGE / LAZY_REASON[key]
    return not (imp.explained or gives_lazy_reason(reason.read_text(encoding="utf-8")))


def test_layers_every_module_has_a_layer():
    names = {p.stem for p in PACKAGE.glob("*.py")} | {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert sorted(names - LAYERS.keys()) == [], "give each new module or subpackage a layer in LAYERS"
    assert sorted(LAYERS.keys() - names) == [], "LAYERS names modules that are gone"


def test_layers_no_module_imports_from_a_layer_above_it():
    offenders = [
        f"{imp} (layer {LAYERS[layer_key(imp.target)]}, above {LAYERS[layer_key(_module_of(imp.path))]})"
        for imp in _package_imports()
        if upward(imp)
    ]
    assert not offenders, "imports from a higher layer:\n" + "\n".join(offenders)


def test_layers_no_function_local_package_imports_outside_the_cli():
    offenders = [
        f"{imp}" + ("" if layer_key(_module_of(imp.path)) not in LAZY_ALLOWED else " (no comment saying why)")
        for imp in _package_imports()
        if hidden(imp)
    ]
    assert not offenders, "function-local imports of apollo_restore:\n" + "\n".join(offenders)


#: Inside ``restoration/``, the ranking's room (:mod:`apollo_restore.restoration.ranking`) sits below
#: the members, the presentation and what loads and runs them: they import it, never the reverse.
#: Of ``restoration/`` it imports only itself and these modules below it (a member's kind; a reading is
#: the schema's).
RANKING_ROOM = "restoration/ranking/"
BELOW_THE_RANKING = ("ranking", "restorer")


def reaches_above_the_ranking(imp: Import) -> bool:
    """Whether an import of the ranking's room reaches a module of ``restoration/`` other than
    :data:`BELOW_THE_RANKING` (or names none: ``from apollo_restore.restoration import x`` hides
    which, so the room names its modules whole)."""
    parts = imp.target.split(".")
    inside = imp.path.startswith(RANKING_ROOM) and parts[1:2] == ["restoration"]
    return inside and (len(parts) == 2 or parts[2] not in BELOW_THE_RANKING)


def torch_lines(source: str) -> list[int]:
    """The lines of one file's source that import torch."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if (isinstance(node, ast.Import) and any(a.name.split(".")[0] == "torch" for a in node.names))
        or (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch")
    ]


def test_layers_the_ranking_room_imports_neither_members_nor_presentation_nor_torch():
    offenders = [f"{imp}" for imp in _package_imports() if reaches_above_the_ranking(imp)]
    assert not offenders, "the ranking imports from above it:\n" + "\n".join(offenders)
    torch = [  # applying a calibration is NumPy; fitting it (torch) is tune's
        f"{file.relative_to(PACKAGE)}:{line}"
        for file in sorted((PACKAGE / RANKING_ROOM).glob("*.py"))
        for line in torch_lines(file.read_text(encoding="utf-8"))
    ]
    assert not torch, "the ranking imports torch:\n" + "\n".join(torch)


def test_layers_the_ranking_room_checker_finds_what_it_forbids():
    source = (
        "import torch\n"
        "from apollo_restore.restoration.members import neural\n"
        "from apollo_restore.restoration import types\n"
        "from apollo_restore.restoration.restorer import Restorer\n"
        "from apollo_restore.restoration.ranking.pool import to_candidates\n"
    )
    found = imports_of(source, "restoration/ranking/example.py")
    assert [imp.line for imp in found if reaches_above_the_ranking(imp)] == [2, 3]
    assert not any(reaches_above_the_ranking(imp) for imp in imports_of(source, "restoration/load_example.py"))
    assert torch_lines(source + "def f():\n    from torch.nn import functional\n") == [1, 7]


CHECKED = """\
from typing import TYPE_CHECKING

from apollo_restore.fim.examples import Hint
from ...restoration import driver

if TYPE_CHECKING:
    from apollo_restore.web.app import create_app


def f():
    # imported here, not at the top: start-up time
    import json
    from apollo_restore.errors import Errors
    from apollo_restore.data import document
    try:
        pass
    except ValueError:
        from apollo_restore.model.checkpoint import load_model  # start-up time
    import apollo_restore.cli.app
"""


def test_layers_checker_finds_upward_and_local_imports():
    found = imports_of(CHECKED, "data/readers/example.py")
    by_target = {(imp.target, imp.local, imp.explained) for imp in found}
    assert by_target == {
        ("apollo_restore.fim.examples", False, False),
        ("apollo_restore.restoration", False, False),
        ("apollo_restore.web.app", False, False),
        ("apollo_restore.errors", True, True),
        ("apollo_restore.data", True, True),
        ("apollo_restore.model.checkpoint", True, True),
        ("apollo_restore.cli.app", True, False),
    }
    assert [imp.line for imp in found if upward(imp)] == [3, 4, 7, 18, 19]
    assert [imp.line for imp in found if hidden(imp)] == [13, 14, 18, 19]
    # the CLI gives the reason of every lazy import once, in its package's docstring
    assert [imp.line for imp in imports_of(CHECKED, "cli/example.py") if hidden(imp)] == []


def test_layers_each_lazy_door_gives_its_reason_once():
    for file in LAZY_REASON.values():
        assert gives_lazy_reason((PACKAGE / file).read_text(encoding="utf-8")), (
            f"{file}: no {LAZY_PARAGRAPH!r} paragraph"
        )
    assert not gives_lazy_reason('"""A module.\n\nIt imports lazily: no paragraph begins as asked."""\n')
    assert gives_lazy_reason('"""A module.\n\nLazy imports: start-up time."""\n')
