"""The torch alias (pyctorch.as_torch): import hook, runner, errors naming missing torch APIs,
install_as_torch, versions. Everything that installs the alias runs in a subprocess (the test
process has the real torch imported for the oracle comparisons)."""
import os
import subprocess
import sys
import textwrap

import pyctorch
from conftest import requires_torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (REPO, env.get("PYTHONPATH")) if p)
    return env


def run(args, cwd=None):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=_env(), cwd=cwd,
                          timeout=120)


def run_code(code, *args):
    """`code` (dedented) run through the runner with -c; returns the CompletedProcess."""
    return run(["-m", "pyctorch.as_torch", "-c", textwrap.dedent(code), *args])


def ok(proc):
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_module_objects_are_shared():
    out = ok(run_code("""
        import sys
        import torch, pyctorch
        import torch.nn as nn
        import torch.nn.functional as F
        from torch.nn import functional as F2
        from torch import optim
        import torch.backends.cudnn as cudnn
        from torch.testing import assert_close
        import torch.utils.benchmark as benchmark
        from torch.utils.checkpoint import checkpoint
        print(torch is pyctorch, nn is pyctorch.nn, F is pyctorch.nn.functional, F2 is F,
              optim is pyctorch.optim, cudnn is pyctorch.backends.cudnn,
              assert_close is pyctorch.testing.assert_close, benchmark is pyctorch.utils.benchmark,
              sys.modules["torch.nn"] is sys.modules["pyctorch.nn"], checkpoint is pyctorch.utils.checkpoint.checkpoint)
        print(pyctorch.__spec__.name, pyctorch.nn.__spec__.name, torch.nn.Linear.__module__)
        print(torch.ones(2).add(1).tolist(), isinstance(torch.ones(1), pyctorch.Tensor))
    """))
    lines = out.splitlines()
    assert lines[0] == " ".join(["True"] * 10)
    assert lines[1] == "pyctorch pyctorch.nn pyctorch.nn.modules.linear"
    assert lines[2] == "[2.0, 2.0] True"


def test_missing_submodule_names_the_torch_api():
    out = ok(run_code("""
        for name in ("torch.nn.does_not_exist", "torch._lazy"):
            try:
                __import__(name)
            except ModuleNotFoundError as e:
                print(type(e).__name__, e.name, "|", e)
        try:
            from torch import _lazy
        except ImportError as e:
            print("from-import", type(e).__name__)
    """))
    assert out.splitlines() == [
        "ModuleNotFoundError torch.nn.does_not_exist | pyctorch does not implement torch.nn.does_not_exist yet",
        "ModuleNotFoundError torch._lazy | pyctorch does not implement torch._lazy yet",
        "from-import ImportError",
    ]


def test_missing_attribute_names_the_torch_api():
    out = ok(run_code("""
        import torch
        import torch.nn.functional as F
        for obj, name in ((torch, "foo_bar"), (F, "foo_bar"), (torch.nn, "Foo"), (torch.optim, "Foo")):
            try:
                getattr(obj, name)
            except AttributeError as e:
                print(e)
        print(hasattr(torch, "foo_bar"), hasattr(F, "scaled_dot_product_attention"), hasattr(torch, "compile"))
        try:
            torch.__wrapped__
        except AttributeError as e:
            print(e)
        print(torch.get_printoptions()["precision"])    # pyctorch's own lazy __getattr__ still works
        torch.set_printoptions(precision=2)
        print(torch.tensor([1.23456]))
        print(torch.testing.assert_close is not None, torch.cuda.is_available(), torch.backends.mps.is_built())
    """))
    lines = out.splitlines()
    assert lines[0] == "module 'torch' has no attribute 'foo_bar': pyctorch does not implement torch.foo_bar yet"
    assert lines[1] == ("module 'torch.nn.functional' has no attribute 'foo_bar': "
                        "pyctorch does not implement torch.nn.functional.foo_bar yet")
    assert lines[2].endswith("pyctorch does not implement torch.nn.Foo yet")
    assert lines[3].endswith("pyctorch does not implement torch.optim.Foo yet")
    assert lines[4] == "False True True"
    assert lines[5] == "module 'torch' has no attribute '__wrapped__'"
    assert lines[6:] == ["4", "tensor([1.23])", "True False False"]


def test_runner_sets_argv_name_file_and_path(tmp_path):
    (tmp_path / "helper_mod.py").write_text("VALUE = 41\n")
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent("""
        import sys
        import torch
        import helper_mod
        print(__name__, __file__ == __import__("os").path.abspath(__file__), sys.argv)
        print(helper_mod.VALUE + 1, torch.__name__)
        if __name__ == "__main__":
            print("main block")
    """))
    out = ok(run(["-m", "pyctorch.as_torch", str(script), "a", "--flag", "3"]))
    assert out.splitlines() == ["__main__ True " + repr([str(script), "a", "--flag", "3"]),
                                "42 pyctorch", "main block"]
    out = ok(run(["-m", "pyctorch.as_torch", "prog.py", "x"], cwd=str(tmp_path)))
    assert out.splitlines()[0] == "__main__ True ['prog.py', 'x']"


def test_runner_exit_codes_and_exceptions(tmp_path):
    script = tmp_path / "exits.py"
    script.write_text("import sys, torch\nsys.exit(int(sys.argv[1]))\n")
    assert run(["-m", "pyctorch.as_torch", str(script), "3"]).returncode == 3
    assert run(["-m", "pyctorch.as_torch", str(script), "0"]).returncode == 0
    boom = tmp_path / "boom.py"
    boom.write_text("import torch\n\ndef f():\n    raise ValueError('bad value 7')\n\nf()\n")
    proc = run(["-m", "pyctorch.as_torch", str(boom)])
    assert proc.returncode == 1
    err = proc.stderr
    assert err.startswith("Traceback (most recent call last):")
    assert f'File "{boom}", line 6, in <module>' in err and "ValueError: bad value 7" in err
    assert "as_torch.py" not in err and "runpy" not in err
    missing = run(["-m", "pyctorch.as_torch", str(tmp_path / "nope.py")])
    assert missing.returncode == 2 and "can't open file" in missing.stderr
    assert run(["-m", "pyctorch.as_torch"]).returncode == 2
    helped = run(["-m", "pyctorch.as_torch", "--help"])
    assert helped.returncode == 0 and "usage: python -m pyctorch.as_torch" in helped.stdout


def test_runner_module_and_command_modes(tmp_path):
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "job.py").write_text("import sys, torch\nprint(__name__, sys.argv[1:], torch.zeros(1).sum().item())\n")
    assert ok(run(["-m", "pyctorch.as_torch", "-m", "mypkg.job", "u", "v"], cwd=str(tmp_path))) == \
        "__main__ ['u', 'v'] 0.0\n"
    assert ok(run_code("import sys, torch; print(sys.argv, __name__, torch.is_tensor(torch.ones(1)))", "q")) == \
        "['-c', 'q'] __main__ True\n"


def test_install_is_idempotent_and_uninstall_restores():
    out = ok(run(["-c", textwrap.dedent("""
        import sys, pyctorch
        from pyctorch import as_torch
        print(pyctorch.__version__, "torch" in sys.modules)
        m = pyctorch.install_as_torch()
        m2 = pyctorch.install_as_torch()
        import torch
        print(m is pyctorch, m2 is pyctorch, torch is pyctorch, as_torch.is_installed(),
              sum(type(f).__name__ == "_TorchAliasFinder" for f in sys.meta_path))
        print(torch.__version__, type(torch.__version__).__name__, pyctorch.version.pyctorch_version)
        import torch.nn.functional
        as_torch.uninstall_as_torch()
        print(pyctorch.__version__, "torch" in sys.modules, "torch.nn.functional" in sys.modules,
              as_torch.is_installed())
        try:
            pyctorch.nn.functional.foo_bar
        except AttributeError as e:
            print(e)
    """)]))
    assert out.splitlines() == [
        "0.1.0 False",
        "True True True True 1",
        "2.13.0 TorchVersion 0.1.0",
        "0.1.0 False False False",
        "module 'pyctorch.nn.functional' has no attribute 'foo_bar'",
    ]


@requires_torch
def test_install_refuses_when_real_torch_is_imported():
    proc = run(["-c", "import torch, pyctorch\npyctorch.install_as_torch()\n"])
    assert proc.returncode == 1
    assert "RuntimeError: install_as_torch(): the real torch is already imported" in proc.stderr


def test_version_under_the_alias():
    out = ok(run_code("""
        import torch, pyctorch
        v = torch.__version__
        print(v, isinstance(v, str), v >= "2.0", v > (2, 1), v == "2.13", v < "2.14.0", v.split(".")[0])
        print(torch.version.__version__, torch.version.cuda, torch.version.git_version,
              pyctorch.version.pyctorch_version, pyctorch.__version__ is torch.__version__)
    """))
    assert out.splitlines() == ["2.13.0 True True True True True 2",
                                "2.13.0 None unknown 0.1.0 True"]


def test_versions_without_the_alias():
    # in this process nothing is aliased: pyctorch.__version__ is the package version
    assert pyctorch.__version__ == "0.1.0" == pyctorch.version.pyctorch_version
    import tomllib
    with open(os.path.join(REPO, "pyproject.toml"), "rb") as f:
        config = tomllib.load(f)
    project = config["project"]
    # one version string: the package metadata and pyctorch.version read pyctorch._PACKAGE_VERSION
    assert "version" not in project and project["dynamic"] == ["version"]
    assert config["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "pyctorch._PACKAGE_VERSION"}
    with open(os.path.join(REPO, "pyctorch", "version.py")) as f:
        assert '"0.1.0"' not in f.read()
    assert project["scripts"]["pyctorch-as-torch"] == "pyctorch.as_torch:main"
    from pyctorch.as_torch import main
    assert callable(main)
    from pyctorch.torch_version import TorchVersion
    v = pyctorch.torch_version.__version__
    assert isinstance(v, TorchVersion) and v == "2.13.0" and pyctorch.version.__version__ == "2.13.0"
    assert v != "2.13.1" and v > "2.13.0rc1" and v > "2.13.0.dev20250101" and v < "2.13.0.post1"
    assert v >= [2, 13] and not v < (2, 13, 0) and v > (1, 99)
    assert TorchVersion("parrot") < "peacock"  # not a version: plain string order
    assert hash(v) == hash("2.13.0") and {v: 1}["2.13.0"] == 1


@requires_torch
def test_torch_version_order_matches_torch():
    from conftest import torch as T
    from pyctorch.torch_version import TorchVersion as P
    versions = ["1.0.dev0", "1.0a1", "1.0b2", "1.0rc1", "1.0", "1.0.post1", "1.0+cpu", "1.10", "2.13.0",
                "2.13.0+cpu", "2.0.0a0+git123", "1!0.1", "2.13"]
    for a in versions:
        for b in versions:
            for op in ("__lt__", "__le__", "__eq__", "__gt__", "__ge__"):
                assert getattr(P(a), op)(b) == getattr(T.torch_version.TorchVersion(a), op)(b), (a, op, b)


def test_plain_import_stays_lazy():
    out = ok(run(["-c", "import sys, pyctorch; print(sorted(m for m in sys.modules if m.startswith('pyctorch.') "
                        "and m.split('.')[1] in ('testing', 'cuda', 'backends', 'as_torch', 'version', "
                        "'torch_version', '_dropin') or m == 'pyctorch.utils.benchmark'))"]))
    assert out.strip() == "[]"


def test_install_from_a_conftest(tmp_path):
    # the documented notebook / pytest use: a conftest.py installs the alias before tests import torch
    (tmp_path / "conftest.py").write_text("import pyctorch\npyctorch.install_as_torch()\n")
    (tmp_path / "test_uses_torch.py").write_text(textwrap.dedent("""
        import torch
        from torch import nn

        def test_linear():
            torch.manual_seed(0)
            layer = nn.Linear(3, 2)
            out = layer(torch.ones(1, 3))
            torch.testing.assert_close(out, layer.weight.sum(1, keepdim=True).t() + layer.bias)
            assert torch.__name__ == "pyctorch" and torch.__version__ >= "2.0"
    """))
    proc = run(["-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)], cwd=str(tmp_path))
    assert proc.returncode == 0 and "1 passed" in proc.stdout, proc.stdout + proc.stderr
