"""Settings shared by the unit tests and the notebook tests (pytest --nbval).

Notebook kernels inherit this process's environment, so the variables set here reach them too.
Two modes (README, "Reproducibility"):
- reference (default): the settings of ``numerics.env``, under which the committed outputs were
  computed; on x86-64 every notebook must reproduce its outputs exactly (strict nbval).
- fast paths (``LMCOURSE_NUMERICS=fast``, ``make test-fast-paths``): a reader's default Jupyter;
  outputs may differ in the last digits, so only errors fail, and every claim must still hold.
On another architecture the reference settings cannot reproduce x86-64 bits, so the notebooks run
as on the fast paths (claims checked, outputs not compared) and the test run says so.
"""
import os
import platform
from pathlib import Path

NUMERICS_FILE = Path(__file__).with_name("numerics.env")


def reference_settings() -> dict[str, str]:
    """The ``NAME=value`` lines of numerics.env."""
    lines = (line.strip() for line in NUMERICS_FILE.read_text().splitlines())
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))


FAST_PATHS = os.environ.get("LMCOURSE_NUMERICS", "reference") == "fast"
X86_64 = platform.machine().lower() in ("x86_64", "amd64")
STRICT_OUTPUTS = X86_64 and not FAST_PATHS

# before anything imports torch or numpy (they read these settings once, when they start)
for name, value in reference_settings().items():
    if FAST_PATHS:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value
# a claim that does not hold fails the notebook test
os.environ["LMCOURSE_CLAIMS"] = "strict"
# progress bars are for people; tests (and the committed outputs) stay silent and deterministic
os.environ["LMCOURSE_PROGRESS"] = "0"
# nothing may be downloaded at run time
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"


def numerics_mode() -> str:
    if FAST_PATHS:
        return "fast paths: notebooks checked for errors and claims, outputs not compared"
    if not X86_64:
        return (f"reference settings on {platform.machine()}: the committed outputs are x86-64 "
                "bits, so notebooks are checked for errors and claims, outputs not compared")
    return "reference settings (numerics.env): notebooks must reproduce their outputs exactly"


def pytest_configure(config):
    if not STRICT_OUTPUTS and getattr(config.option, "nbval", False):
        config.option.nbval, config.option.nbval_lax = False, True


def pytest_report_header(config):
    return f"numerics: {numerics_mode()}"


def pytest_terminal_summary(terminalreporter):
    if not STRICT_OUTPUTS:
        terminalreporter.write_line(f"numerics: {numerics_mode()}")
