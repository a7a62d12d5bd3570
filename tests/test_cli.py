"""Process-level tests: the CLI demo and the asv suite."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_demo_tells_the_tutorial_story():
    out = subprocess.run([sys.executable, "-m", "arrjit", "demo"], capture_output=True,
                         text=True, check=True, timeout=300).stdout
    assert "first call" in out and "cached call" in out
    assert "static_argnames=('flag',)" in out
    assert "traces=2, compiles=1" in out
    assert "shares the input buffer: True" in out
    assert "speed-up" in out and "a*b + c*d - e" in out


def test_asv_suite_is_valid():
    asv = shutil.which("asv")
    assert asv is not None, "asv is part of the test extra"
    env = dict(os.environ)
    res = subprocess.run([asv, "check", "--python=same"], cwd=ROOT, capture_output=True,
                         text=True, timeout=300, env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "No problems found" in res.stdout
    assert "failed" not in res.stdout + res.stderr, res.stdout + res.stderr


def test_seed_examples_run_unchanged():
    seed = ROOT / "examples" / "seed_examples.py"   # the tutorial, apart from its imports
    out = subprocess.run([sys.executable, str(seed)], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "all seed examples behaved as described" in out.stdout


def test_bench_quick_prints_ratios_and_writes_json_and_chart(tmp_path):
    import json

    out = subprocess.run([sys.executable, "-m", "arrjit", "bench", "--quick", "--json",
                          str(tmp_path / "b.json"), "--plot", str(tmp_path / "b.png")],
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr
    assert "copy bandwidth" in out.stdout and "a*b + c*d - e" in out.stdout
    report = json.loads((tmp_path / "b.json").read_text())
    names = {r["workload"] for r in report["results"]}
    assert {"(a*b).sum()", "heat stencil, 100 fori_loop steps"} <= names
    for r in report["results"]:
        assert r["arrjit_seconds"] > 0 and r["ratios"]["numpy"] > 0
    assert (tmp_path / "b.png").stat().st_size > 10_000
    assert "] 11/11 done" in out.stderr or "done" in out.stderr  # the progress bar


def test_cache_cli_errors_and_missing_directory(tmp_path, capsys):
    from arrjit.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["cache", "prune", "--max-size", "lots"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "usage:" in err and "--max-size: cannot read size 'lots'" in err
    assert "Traceback" not in err
    import arrjit

    before = arrjit.config.cache_dir
    arrjit.config.update("cache_dir", str(tmp_path / "nowhere"))
    try:
        assert main(["cache", "info"]) == 0
    finally:
        arrjit.config.update("cache_dir", before)
    assert "does not exist: nothing is cached yet" in capsys.readouterr().out


def test_bench_plot_without_matplotlib_says_what_to_install(monkeypatch):
    """Checked before any benchmark runs, not after the table."""
    import importlib.util
    from arrjit.cli import bench

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else real(name, *a))
    monkeypatch.setattr(bench, "run", lambda quick: pytest.fail("benchmarks ran"))
    with pytest.raises(SystemExit, match=r"--plot needs matplotlib.*pip install matplotlib"):
        bench.main(quick=True, plot_path="chart.png", json_path=None)
