"""The newcomer examples in ``examples/`` run and check their own answers (at small sizes)."""
import importlib.util
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_optimiser_step_reduces_the_loss():
    assert _load("optimiser_step").main(steps=200) < 0.08


def test_heat_stencil_matches_numpy(capsys):
    _load("heat_stencil").main(n=24, steps=30)
    assert "heat kept" in capsys.readouterr().out


def test_dask_statistics_match_numpy(capsys):
    _load("dask_statistics").main(rows=20_000, columns=4)
    assert "blocks" in capsys.readouterr().out
