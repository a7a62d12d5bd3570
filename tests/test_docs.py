"""The documentation builds with warnings as errors (every cross-reference into arrjit and
every internal link resolves), the README's relative links point at files, and the package
builds and its README renders on the package index (``twine check``)."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_docs_build_without_warnings(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-q", "-b", "html",
         str(ROOT / "docs"), str(tmp_path / "html")],
        capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-4000:]
    assert (tmp_path / "html" / "api" / "numpy.html").read_text().count('class="sig-name') > 300


def test_every_relative_link_of_the_readme_names_a_file():
    text = (ROOT / "README.md").read_text()
    targets = [t for t in re.findall(r"\]\(([^)#]+)\)", text) if "://" not in t]
    assert targets
    missing = [t for t in targets if not (ROOT / t).exists()]
    assert not missing


def test_the_readme_is_short():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 200


def _copy_of_the_project(tmp_path: Path) -> Path:
    ignored = shutil.ignore_patterns(".git", ".ci-venv", "build", "dist", "*.egg-info",
                                     "__pycache__", "_build", ".hypothesis", ".asv",
                                     ".pytest_cache", ".device-kit")
    target = tmp_path / "project"
    shutil.copytree(ROOT, target, ignore=ignored)
    return target


@pytest.mark.slow
def test_the_package_builds_and_its_readme_renders(tmp_path):
    project = _copy_of_the_project(tmp_path)
    dist = tmp_path / "dist"
    build = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--sdist",
                            "--wheel", "--outdir", str(dist), str(project)],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    files = sorted(dist.iterdir())
    assert sorted(f.suffix for f in files) == [".gz", ".whl"]
    check = subprocess.run([sys.executable, "-m", "twine", "check", "--strict",
                            *map(str, files)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
