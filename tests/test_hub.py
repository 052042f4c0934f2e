"""pyctorch.hub offline: cache directories, checkpoints from the cache and from file:// URLs, hash checks,
local and cached-GitHub hubconf repositories, and clear errors when the network is needed and absent."""
import hashlib
import os
import textwrap
import zipfile
from urllib.error import URLError

import pytest

import pyctorch
import pyctorch.hub as hub
from conftest import HAVE_TORCH, requires_torch

if HAVE_TORCH:
    import torch
    import torch.hub as thub

# a port nothing listens on: a download attempt fails at once instead of waiting on DNS
UNREACHABLE = "http://127.0.0.1:9/weights/{}"

HUBCONF = '''
dependencies = ["json"]
import pyctorch


def tiny(width=2, scale=1.0):
    """A tiny linear model."""
    lin = pyctorch.nn.Linear(width, 1)
    lin.scale = scale
    return lin


def _helper():
    return 0


NOT_CALLABLE = 3
'''


@pytest.fixture
def hub_dir(tmp_path, monkeypatch):
    """A fresh hub directory for each test (set_dir), restored afterwards."""
    monkeypatch.setattr(hub, "_hub_dir", None)
    d = tmp_path / "hub"
    hub.set_dir(str(d))
    return d


@pytest.fixture
def offline(monkeypatch):
    """Any network access by the hub fails at once, as without a connection."""
    def refuse(*args, **kwargs):
        raise URLError("[Errno -3] Temporary failure in name resolution")
    monkeypatch.setattr(hub, "urlopen", refuse)


def _state():
    pyctorch.manual_seed(0)
    return pyctorch.nn.Linear(3, 2).state_dict()


def _same_state(a, b):
    return list(a) == list(b) and all(pyctorch.equal(a[k], b[k]) for k in a)


def test_get_dir_follows_torch_home_and_set_dir(monkeypatch, tmp_path):
    monkeypatch.setattr(hub, "_hub_dir", None)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "th"))
    assert hub.get_dir() == str(tmp_path / "th" / "hub")
    monkeypatch.delenv("TORCH_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert hub.get_dir() == str(tmp_path / "xdg" / "torch" / "hub")
    if HAVE_TORCH:
        monkeypatch.setattr(thub, "_hub_dir", None)
        assert thub.get_dir() == hub.get_dir()
    hub.set_dir("~/somewhere")
    assert hub.get_dir() == os.path.expanduser("~/somewhere")


def test_load_state_dict_from_cache_without_network(hub_dir, offline):
    state = _state()
    (hub_dir / "checkpoints").mkdir(parents=True)
    pyctorch.save(state, hub_dir / "checkpoints" / "tiny-0123abcd.pth")
    loaded = hub.load_state_dict_from_url(UNREACHABLE.format("tiny-0123abcd.pth"), weights_only=True)
    assert _same_state(loaded, state)
    other = hub_dir / "elsewhere"
    other.mkdir()
    pyctorch.save(state, other / "renamed.pt")
    loaded = hub.load_state_dict_from_url(UNREACHABLE.format("x.pt"), model_dir=str(other), file_name="renamed.pt")
    assert _same_state(loaded, state)


def test_download_failure_names_url_and_cache_path(hub_dir):
    url = UNREACHABLE.format("missing.pth")
    with pytest.raises(hub.HubDownloadError) as info:
        hub.load_state_dict_from_url(url, progress=False)
    message = str(info.value)
    assert url in message and str(hub_dir / "checkpoints" / "missing.pth") in message
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, URLError)
    assert os.listdir(hub_dir / "checkpoints") == []  # no partial file left behind


def test_file_url_download_and_hash_check(hub_dir, tmp_path):
    state = _state()
    src = tmp_path / "src.pth"
    pyctorch.save(state, src)
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    good = tmp_path / f"tiny-{digest[:10]}.pth"
    good.write_bytes(src.read_bytes())
    loaded = hub.load_state_dict_from_url(good.as_uri(), check_hash=True, progress=False)
    assert _same_state(loaded, state)
    assert (hub_dir / "checkpoints" / good.name).read_bytes() == src.read_bytes()

    bad = tmp_path / "tiny-deadbeef.pth"
    bad.write_bytes(src.read_bytes())
    with pytest.raises(RuntimeError, match=f'invalid hash value \\(expected "deadbeef", got "{digest}"\\)'):
        hub.load_state_dict_from_url(bad.as_uri(), check_hash=True, progress=False)
    assert not (hub_dir / "checkpoints" / bad.name).exists()
    assert sorted(os.listdir(hub_dir / "checkpoints")) == [good.name]

    dst = tmp_path / "copy.bin"
    hub.download_url_to_file(src.as_uri(), str(dst), hash_prefix=digest[:6], progress=False)
    assert dst.read_bytes() == src.read_bytes()


@requires_torch
def test_hash_error_matches_torch(tmp_path):
    src = tmp_path / "blob"
    src.write_bytes(b"pyctorch")
    errors = []
    for mod in (hub, thub):
        with pytest.raises(RuntimeError) as info:
            mod.download_url_to_file(src.as_uri(), str(tmp_path / "out"), hash_prefix="0000", progress=False)
        errors.append(str(info.value))
    assert errors[0] == errors[1]
    assert not (tmp_path / "out").exists()


def test_legacy_zip_checkpoint(hub_dir, tmp_path):
    state = _state()
    inner = tmp_path / "weights.pt"
    pyctorch.save(state, inner)
    (hub_dir / "checkpoints").mkdir(parents=True)
    with zipfile.ZipFile(hub_dir / "checkpoints" / "old.zip", "w") as zf:
        zf.write(inner, "weights.pt")
    with pytest.warns(FutureWarning, match="old format"):
        loaded = hub.load_state_dict_from_url(UNREACHABLE.format("old.zip"))
    assert _same_state(loaded, state)


def _write_repo(path):
    path.mkdir(parents=True)
    (path / "hubconf.py").write_text(textwrap.dedent(HUBCONF))
    return path


def test_local_source(tmp_path):
    repo = _write_repo(tmp_path / "repo")
    model = hub.load(str(repo), "tiny", 3, source="local", scale=2.0)
    assert isinstance(model, pyctorch.nn.Linear) and model.in_features == 3 and model.scale == 2.0
    with pytest.raises(RuntimeError, match="Cannot find callable NOT_CALLABLE in hubconf"):
        hub.load(str(repo), "NOT_CALLABLE", source="local")
    with pytest.raises(ValueError, match='Unknown source: "svn"'):
        hub.load(str(repo), "tiny", source="svn")
    with pytest.raises(ValueError, match="model should be a string"):
        hub.load(str(repo), 3, source="local")
    (repo / "hubconf.py").write_text("dependencies = ['json', 'no_such_module_xyz']\ndef m():\n    return 1\n")
    with pytest.raises(RuntimeError, match="Missing dependencies: no_such_module_xyz"):
        hub.load(str(repo), "m", source="local")


def test_github_source_from_cache_offline(hub_dir, offline, capsys):
    _write_repo(hub_dir / "someone_models_v1")
    model = hub.load("someone/models:v1", "tiny", trust_repo=True)
    assert isinstance(model, pyctorch.nn.Linear)
    assert "Using cache found in" in capsys.readouterr().err
    assert (hub_dir / "trusted_list").read_text() == ""  # a downloaded repository is trusted without listing
    # an already downloaded repository counts as trusted, so "check" asks nothing
    assert hub.list("someone/models:v1", trust_repo="check", verbose=False) == ["tiny"]
    assert hub.help("someone/models:v1", "tiny").strip() == "A tiny linear model."
    # no ref: GitHub decides main/master; offline, a cached master copy is used
    _write_repo(hub_dir / "someone_other_master")
    assert isinstance(hub.load("someone/other", "tiny", trust_repo=True, verbose=False), pyctorch.nn.Linear)
    with pytest.raises(RuntimeError, match="no internet connection and the repo could not be found in the cache"):
        hub.load("someone/absent", "tiny", trust_repo=True)


def test_github_source_needs_network_and_says_so(hub_dir, offline):
    with pytest.raises(hub.HubDownloadError, match="skip_validation=True") as info:
        hub.load("someone/fresh:v2", "tiny", trust_repo=True)
    assert str(hub_dir / "someone_fresh_v2") in str(info.value)
    assert (hub_dir / "trusted_list").read_text().split() == ["someone_fresh"]  # trust_repo=True records it
    with pytest.raises(hub.HubDownloadError) as info:
        hub.load("someone/fresh:v2", "tiny", trust_repo=True, skip_validation=True)
    message = str(info.value)
    assert "https://github.com/someone/fresh/zipball/v2" in message and str(hub_dir / "someone_fresh_v2") in message


def test_untrusted_repo_prompts(hub_dir, offline, monkeypatch):
    _write_repo(hub_dir / "stranger_repo_main")
    monkeypatch.setattr("builtins.input", lambda prompt: "no")
    with pytest.raises(Exception, match="Untrusted repository"):
        hub.load("stranger/repo:main", "tiny", trust_repo=False)


@requires_torch
def test_local_repo_matches_torch(tmp_path, monkeypatch):
    """The same hubconf directory through torch.hub and pyctorch.hub: entry points, docs, results."""
    repo = _write_repo(tmp_path / "repo")
    (repo / "hubconf.py").write_text(textwrap.dedent('''
        dependencies = []


        def answer(x=1):
            """Doc of answer."""
            return {"x": x}
    '''))
    assert hub.load(str(repo), "answer", 5, source="local") == thub.load(str(repo), "answer", 5, source="local")
    for mod in (hub, thub):
        monkeypatch.setattr(mod, "_hub_dir", None)
        mod.set_dir(str(tmp_path / "shared"))
    (tmp_path / "shared" / "checkpoints").mkdir(parents=True)
    torch.save({"w": torch.arange(3)}, tmp_path / "shared" / "checkpoints" / "w.pt")
    ours = hub.load_state_dict_from_url(UNREACHABLE.format("w.pt"), weights_only=True)
    assert ours["w"].tolist() == [0, 1, 2]


@requires_torch
def test_names_cover_torch_all():
    assert [n for n in thub.__all__ if not hasattr(hub, n)] == []
    assert pyctorch.hub is hub
