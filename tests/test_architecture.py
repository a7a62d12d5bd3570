"""Gates that keep the structure: every per-op table covers its op group, the import-linter
layer contracts hold, mypy passes on the core, passes, plan, runtime and backends, and no
module grows past the size one reader can hold. Pure: nothing compiles."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from arrjit import batching
from arrjit.backends import REGISTRY, get_backend
from arrjit.backends.cpu import codegen, expressions
from arrjit.backends.cuda import expressions as cuda_expressions, reduce as cuda_reduce
from arrjit.core import interpret, rules
from arrjit.core.ir import (ALL_OPS, ELEMENTWISE, LIBRARY_CALLS, REDUCTIONS, UFUNC_OPS, VIEWS,
                            Op)
from arrjit.passes import views

ROOT = Path(__file__).resolve().parents[1]

# (table, the op group it must cover exactly)
TABLES = {
    "abstract evaluation (core.rules.ABSTRACT_EVAL)": (rules.ABSTRACT_EVAL, ALL_OPS),
    "reference interpreter (core.interpret.IMPLS)": (interpret.IMPLS, ALL_OPS),
    "batching (batching.BATCH_RULES)": (batching.BATCH_RULES, ALL_OPS - {Op.CONST}),
    "cost (core.rules.COSTLY)": (rules.COSTLY, ELEMENTWISE),
    "reduction rules (core.rules.REDUCTION_RULES)": (rules.REDUCTION_RULES, REDUCTIONS),
    "view index maps (passes.views.VIEW_MAPS)": (views.VIEW_MAPS, VIEWS),
    "CPU expressions (backends.cpu.expressions.EXPRESSIONS)": (expressions.EXPRESSIONS, ELEMENTWISE),
    "CUDA expressions (backends.cuda.expressions.EXPRESSIONS)": (cuda_expressions.EXPRESSIONS,
                                                                 ELEMENTWISE),
}


@pytest.mark.parametrize("name", sorted(TABLES))
def test_every_table_covers_its_op_group(name):
    table, group = TABLES[name]
    assert set(table) == set(group), (f"{name}: missing {sorted(o.value for o in group - set(table))}, "
                                      f"extra {sorted(o.value for o in set(table) - group)}")


def test_op_groups_partition_the_ops():
    groups = [ELEMENTWISE, VIEWS, REDUCTIONS, LIBRARY_CALLS, {Op.WHILE}, {Op.CONST}]
    assert sum(len(g) for g in groups) == len(ALL_OPS)
    assert UFUNC_OPS <= ELEMENTWISE


def test_every_reduction_rule_names_a_rendered_update():
    for op, rule in rules.REDUCTION_RULES.items():
        assert rule.update in codegen.UPDATES, op
        assert cuda_reduce.combine(rule.update, np.dtype("float64"), "a", "b"), op


def test_backends_are_chosen_by_name_with_a_clear_error():
    assert get_backend("cpu").name == "cpu" and "cpu" in REGISTRY
    with pytest.raises(ValueError, match=r"device='tpu' is not known.*'cpu'"):
        get_backend("tpu")


def _run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_import_layers_hold():
    result = _run(str(Path(sys.executable).with_name("lint-imports")), "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout, result.stdout


def test_mypy_passes_on_the_typed_packages():
    result = _run(sys.executable, "-m", "mypy", "--no-incremental")
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_module_is_over_500_lines():
    # the code generator and the math library are each one table-driven renderer
    allowed: dict[str, int] = {}
    for path in (ROOT / "arrjit").rglob("*.py"):
        rel = path.relative_to(ROOT / "arrjit").as_posix()
        lines = len(path.read_text().splitlines())
        assert lines <= allowed.get(rel, 500), f"{rel} has {lines} lines"
