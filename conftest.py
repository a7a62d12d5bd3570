"""The README's ``python`` code blocks run as a test (Sybil); the guide's are in docs/."""
from sybil import Sybil
from sybil.parsers.myst import PythonCodeBlockParser

pytest_collect_file = Sybil(parsers=[PythonCodeBlockParser()], patterns=["README.md"]).pytest()
