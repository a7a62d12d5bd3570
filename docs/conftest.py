"""Every ``python`` code block of the user guide runs as a test, in order, one namespace per
page (Sybil collects them; a block that raises fails its page's test). A page may change
``arrjit.config``; it is restored after the page."""
import arrjit
from sybil import Sybil
from sybil.parsers.myst import PythonCodeBlockParser


def _save_config(namespace):
    namespace["__saved_config__"] = dict(arrjit.config.values())


def _restore_config(namespace):
    for name, value in namespace["__saved_config__"].items():
        if arrjit.config.values()[name] != value:
            arrjit.config.update(name, value)


collect_ignore = ["conf.py"]      # Sphinx's configuration, not a test module

pytest_collect_file = Sybil(parsers=[PythonCodeBlockParser()], patterns=["*.md"],
                            setup=_save_config, teardown=_restore_config).pytest()
