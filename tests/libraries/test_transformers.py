"""Hugging Face transformers runs unchanged under the torch alias and prints torch's numbers.

Each script in scripts/hf_*.py is plain torch + transformers code (tiny configs): GPT-2 trained 5 AdamW
steps then greedy `generate`, BERT sequence classification forward + backward, Llama causal LM
forward + backward. The real torch runs them all in one subprocess; pyctorch runs each under
`python -m pyctorch.as_torch` in its own subprocess, one thread each, and the printed numbers must agree.

Three things transformers touches at import need pyctorch's C layer (c_gap_standins.py says which):
while they are missing, `test_matches_torch` skips naming them and `test_matches_torch_with_c_standins`
runs the same scripts with only those names stood in, so every other library path is pyctorch's.
"""
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from conftest import requires_torch

pytest.importorskip("transformers", reason="transformers is not installed")

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SCRIPTS = ["hf_gpt2.py", "hf_bert.py", "hf_llama.py"]
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
sys.path.insert(0, HERE)
import c_gap_standins  # noqa: E402

C_GAPS = list(c_gap_standins.MISSING_DTYPES) + ([] if c_gap_standins.HAS_META else ['device("meta")'])


def _env(with_repo):
    env = dict(os.environ, OMP_NUM_THREADS="1", TRANSFORMERS_VERBOSITY="error", TOKENIZERS_PARALLELISM="false",
               HF_HUB_OFFLINE="1")
    env.pop("PYTHONPATH", None)
    if with_repo:
        env["PYTHONPATH"] = REPO
    return env


_TORCH_DRIVER = r"""
import contextlib, io, json, os, runpy, sys
out = {}
for path in sys.argv[1:]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        runpy.run_path(path, run_name="__main__")
    out[os.path.basename(path)] = buf.getvalue()
print(json.dumps(out))
"""
_TORCH_OUTPUTS = {}


def torch_output(script):
    if not _TORCH_OUTPUTS:
        paths = [os.path.join(HERE, "scripts", s) for s in SCRIPTS]
        proc = subprocess.run([sys.executable, "-c", _TORCH_DRIVER, *paths], capture_output=True, text=True,
                              env=_env(False), timeout=180, cwd=HERE)
        assert proc.returncode == 0, proc.stderr[-4000:]
        _TORCH_OUTPUTS.update(json.loads(proc.stdout.strip().splitlines()[-1]))
    return _TORCH_OUTPUTS[script]


def pyctorch_output(script, standins):
    runner = [os.path.join(HERE, "c_gap_standins.py")] if standins else []
    proc = subprocess.run([sys.executable, "-m", "pyctorch.as_torch", *runner, os.path.join(HERE, "scripts", script)],
                          capture_output=True, text=True, env=_env(True), timeout=120, cwd=HERE)
    assert proc.returncode == 0, f"{script} failed under pyctorch:\n{proc.stdout}\n{proc.stderr[-6000:]}"
    return proc.stdout


def assert_same_output(ours, theirs):
    a_lines, b_lines = ours.strip().splitlines(), theirs.strip().splitlines()
    assert len(a_lines) == len(b_lines), f"\npyctorch:\n{ours}\ntorch:\n{theirs}"
    for a, b in zip(a_lines, b_lines):
        if a.startswith("tokens"):  # greedy decoding: the same tokens exactly
            assert a == b
            continue
        assert NUMBER.sub("#", a) == NUMBER.sub("#", b), f"line differs: {a!r} vs torch {b!r}"
        na, nb = [float(x) for x in NUMBER.findall(a)], [float(x) for x in NUMBER.findall(b)]
        np.testing.assert_allclose(na, nb, rtol=1e-5, atol=3e-6, err_msg=f"{a!r} vs torch {b!r}")


@requires_torch
@pytest.mark.parametrize("script", SCRIPTS)
def test_matches_torch(script):
    if C_GAPS:
        pytest.skip("transformers needs torch." + ", torch.".join(C_GAPS) + " (pyctorch's C layer lacks them)")
    assert_same_output(pyctorch_output(script, standins=False), torch_output(script))


@requires_torch
@pytest.mark.parametrize("script", SCRIPTS)
def test_matches_torch_with_c_standins(script):
    assert_same_output(pyctorch_output(script, standins=True), torch_output(script))
