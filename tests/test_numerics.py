"""Reference numerics: this machine computes the same bits as the machines recorded before."""
import importlib.util
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy
import torch

ROOT = Path(__file__).parents[1]
RECORD = json.loads((ROOT / "tests/data/numerics_fingerprints.json").read_text())
# numerics.env is read by the root conftest.py; use its reader rather than a second one
_spec = importlib.util.spec_from_file_location("root_conftest", ROOT / "conftest.py")
_root_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_root_conftest)
reference_settings = _root_conftest.reference_settings


def test_conftest_applies_the_reference_settings():
    if os.environ.get("LMCOURSE_NUMERICS") == "fast":
        pytest.skip("fast-path run: the reference settings are off on purpose")
    assert {name: os.environ.get(name) for name in reference_settings()} == reference_settings()
    assert torch.backends.cpu.get_cpu_capability() == "DEFAULT"


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                    reason="the recorded fingerprints are x86-64 bits")
def test_fingerprint_under_the_reference_settings_equals_the_recorded_one():
    versions = {"torch": torch.__version__, "numpy": np.__version__, "scipy": scipy.__version__}
    if versions != RECORD["versions"]:
        pytest.skip(f"not the reference environment (requirements.lock): {versions}")
    env = {**os.environ, **reference_settings()}
    out = subprocess.run([sys.executable, str(ROOT / "scripts/numerics_fingerprint.py"), "1"],
                         env=env, capture_output=True, text=True, check=True).stdout
    mine = json.loads(out)
    expected = RECORD["expected"]
    assert (mine["torch"], mine["numpy/scipy"]) == (expected["torch"], expected["numpy/scipy"]), (
        f"{mine['cpu']} computes other bits than the recorded machines under numerics.env: "
        f"{mine}; recorded: {expected}")
