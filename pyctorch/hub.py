"""torch.hub: load models from a directory or a GitHub repository holding a hubconf.py, and download
checkpoints into a local cache.

The cache layout is torch's, so pyctorch and torch share one cache: get_dir() is $TORCH_HOME/hub
($TORCH_HOME defaults to $XDG_CACHE_HOME/torch, that to ~/.cache), checkpoints go to
<hub_dir>/checkpoints/<file name>, GitHub repositories to <hub_dir>/<owner>_<name>_<ref>, and the
repositories the user trusts are listed in <hub_dir>/trusted_list.

Note [Hub offline]
A file already in the cache is used without touching the network, so cached checkpoints and cached
repositories load offline. When a download is needed and the network fails, the error is a HubDownloadError
(a RuntimeError that is also a urllib URLError, so torch-style `except URLError` handlers keep working)
naming the URL and the cache path where a copy placed by hand would be used instead.
"""
import contextlib
import errno
import hashlib
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
import uuid
import warnings
import zipfile
from pathlib import Path
from urllib.error import HTTPError, URLError
from urllib.parse import urlparse
from urllib.request import Request, urlopen

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url", "set_dir"]

# "resnet18-bfd8deac.pth": the hex digits after the last dash are the SHA256 prefix checked by check_hash
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")
ENV_GITHUB_TOKEN = "GITHUB_TOKEN"
ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
VAR_DEPENDENCY = "dependencies"
MODULE_HUBCONF = "hubconf.py"
READ_DATA_CHUNK = 128 * 1024

_hub_dir = None


class HubDownloadError(RuntimeError, URLError):
    """A download the hub needed failed (Note [Hub offline])."""

    def __init__(self, message, reason=None):
        RuntimeError.__init__(self, message)
        self.reason = reason if reason is not None else message

    def __str__(self):
        return self.args[0]


# ---- directories ----

def _get_torch_home():
    default = os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "torch")
    return os.path.expanduser(os.getenv(ENV_TORCH_HOME, default))


def get_dir():
    """The hub cache directory: set_dir's, else $TORCH_HOME/hub."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d):
    """Use `d` as the hub cache directory from now on."""
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


# ---- downloads ----

class _Progress:
    """A minimal progress line on stderr (tqdm's interface, the part used here); tqdm itself when installed."""

    def __init__(self, total=None, disable=False, **kwargs):
        self.total, self.disable, self.n = total, disable, 0

    def update(self, n):
        if self.disable:
            return
        self.n += n
        shown = f"{self.n:.1f} bytes" if self.total is None else f"{100 * self.n / float(self.total):.1f}%"
        sys.stderr.write("\r" + shown)
        sys.stderr.flush()

    def set_description(self, *args, **kwargs):
        pass

    def write(self, s):
        sys.stderr.write(f"{s}\n")

    def close(self):
        self.disable = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if not self.disable:
            sys.stderr.write("\n")


def _progress_bar(**kwargs):
    try:
        from tqdm import tqdm
    except ImportError:
        return _Progress(**kwargs)
    return tqdm(**kwargs)


def _open_temporary_beside(dst):
    """A new file next to `dst`, so the finished download is renamed into place and a broken one never replaces it."""
    for _ in range(tempfile.TMP_MAX):
        tmp = f"{dst}.{uuid.uuid4().hex}.partial"
        try:
            return open(tmp, "xb")
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "No usable temporary file name found")


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Download `url` (http(s), file://, anything urllib opens) to the path `dst`.

    With hash_prefix, the file's SHA256 hex digest must start with it, else RuntimeError and `dst` is untouched.
    """
    dst = os.path.expanduser(dst)
    f = _open_temporary_beside(dst)
    try:
        try:
            response = urlopen(Request(url, headers={"User-Agent": "torch.hub"}))
        except HTTPError:
            raise
        except URLError as e:
            raise HubDownloadError(f"torch.hub could not download {url} to {dst}: {e.reason}. If you have the file, "
                                   f"place it at {dst} and retry.", e.reason) from e
        with response:
            lengths = response.info().get_all("Content-Length")
            size = int(lengths[0]) if lengths else None
            digest = hashlib.sha256() if hash_prefix is not None else None
            with _progress_bar(total=size, disable=not progress, unit="B", unit_scale=True,
                               unit_divisor=1024) as bar:
                while True:
                    chunk = response.read(READ_DATA_CHUNK)
                    if not chunk:
                        break
                    f.write(chunk)
                    if digest is not None:
                        digest.update(chunk)
                    bar.update(len(chunk))
        f.close()
        if digest is not None:
            hexdigest = digest.hexdigest()
            if hexdigest[:len(hash_prefix)] != hash_prefix:
                raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{hexdigest}")')
        shutil.move(f.name, dst)
    finally:
        f.close()
        if os.path.exists(f.name):
            os.remove(f.name)


# ---- checkpoints ----

def _is_legacy_zip_format(filename):
    """A zip holding exactly one file: the way checkpoints were shipped before torch 1.6's zip format."""
    if not zipfile.is_zipfile(filename):
        return False
    with zipfile.ZipFile(filename) as zf:
        members = zf.infolist()
    return len(members) == 1 and not members[0].is_dir()


def _safe_extract_zip(zf, extract_to):
    """Extract every member, refusing absolute paths and paths that climb out of `extract_to`."""
    root = Path(extract_to).resolve(strict=False)
    for member in zf.infolist():
        name = os.path.normpath(member.filename)
        if name.startswith(("/", "\\")) or (len(name) >= 2 and name[1] == ":" and name[0].isalpha()):
            raise ValueError(f"Archive entry has absolute path: {member.filename}")
        if ".." in re.split(r"[/\\]", name):
            raise ValueError(f"Archive entry contains directory traversal: {member.filename}")
        if not (root / name).resolve(strict=False).is_relative_to(root):
            raise ValueError(f"Archive entry escapes target directory: {member.filename}")
        zf.extract(member, root)


def _legacy_zip_load(filename, model_dir, map_location, weights_only):
    from .serialization import load as torch_load
    warnings.warn("Falling back to the old format < 1.6. This support will be deprecated in favor of default zipfile "
                  "format introduced in 1.6. Please redo torch.save() to save it in the new zipfile format.",
                  FutureWarning, stacklevel=3)
    with zipfile.ZipFile(filename) as zf:
        members = zf.infolist()
        if len(members) != 1:
            raise RuntimeError("Only one file(not dir) is allowed in the zipfile")
        _safe_extract_zip(zf, model_dir)
        extracted = os.path.join(model_dir, members[0].filename)
    return torch_load(extracted, map_location=map_location, weights_only=weights_only)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True, check_hash=False,
                             file_name=None, weights_only=False):
    """torch.load the checkpoint at `url`, from the cache <hub_dir>/checkpoints/<file name> when it is there.

    A missing file is downloaded first (Note [Hub offline]); with check_hash the file name must carry its
    SHA256 prefix ("name-<hex>.ext") and the download is checked against it.
    """
    from .serialization import load as torch_load
    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        hash_prefix = None
        if check_hash:
            match = HASH_REGEX.search(filename)
            hash_prefix = match.group(1) if match else None
        download_url_to_file(url, cached_file, hash_prefix, progress=progress)
    if _is_legacy_zip_format(cached_file):
        return _legacy_zip_load(cached_file, model_dir, map_location, weights_only)
    return torch_load(cached_file, map_location=map_location, weights_only=weights_only)


# ---- repositories ----

@contextlib.contextmanager
def _add_to_sys_path(path):
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _import_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None:
        raise AssertionError(f"failed to load spec from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _load_attr_from_module(module, func_name):
    return getattr(module, func_name) if func_name in dir(module) else None


def _remove_if_exists(path):
    if os.path.isfile(path):
        os.remove(path)
    elif os.path.exists(path):
        shutil.rmtree(path)


def _git_archive_link(repo_owner, repo_name, ref):
    return f"https://github.com/{repo_owner}/{repo_name}/zipball/{ref}"


def _parse_repo_info(github):
    """"owner/name[:ref]" -> (owner, name, ref); without a ref, "main" if GitHub has it, else "master"."""
    repo_info, _, ref = github.partition(":")
    repo_owner, repo_name = repo_info.split("/")
    if ref:
        return repo_owner, repo_name, ref
    try:
        with urlopen(f"https://github.com/{repo_owner}/{repo_name}/tree/main/"):
            return repo_owner, repo_name, "main"
    except HTTPError as e:
        if e.code == 404:
            return repo_owner, repo_name, "master"
        raise
    except URLError as e:
        # offline: a cached copy of main or master decides (Note [Hub offline])
        for candidate in ("main", "master"):
            if os.path.exists(os.path.join(get_dir(), f"{repo_owner}_{repo_name}_{candidate}")):
                return repo_owner, repo_name, candidate
        raise RuntimeError("It looks like there is no internet connection and the repo could not be found in the "
                           f"cache ({get_dir()})") from e


def _read_url(url):
    with urlopen(url) as r:
        return r.read().decode(r.headers.get_content_charset("utf-8"))


def _validate_not_a_forked_repo(repo_owner, repo_name, ref):
    """The ref must be a branch, tag or commit of the repository itself (a fork's commit would pass otherwise)."""
    headers = {"Accept": "application/vnd.github.v3+json"}
    token = os.environ.get(ENV_GITHUB_TOKEN)
    if token is not None:
        headers["Authorization"] = f"token {token}"
    for prefix in (f"https://api.github.com/repos/{repo_owner}/{repo_name}/branches",
                   f"https://api.github.com/repos/{repo_owner}/{repo_name}/tags"):
        page = 0
        while True:
            page += 1
            url = f"{prefix}?per_page=100&page={page}"
            try:
                try:
                    entries = json.loads(_read_url(Request(url, headers=headers)))
                except HTTPError:
                    headers.pop("Authorization", None)  # the token may lack the permission: retry without it
                    entries = json.loads(_read_url(Request(url, headers=headers)))
            except URLError as e:
                if isinstance(e, HTTPError):
                    raise
                raise HubDownloadError(f"torch.hub could not reach {url} to validate {repo_owner}/{repo_name}:{ref}: "
                                       f"{e.reason}. Pass skip_validation=True, or place the repository at "
                                       f"{os.path.join(get_dir(), f'{repo_owner}_{repo_name}_{ref}')}.",
                                       e.reason) from e
            if not entries:
                break
            if any(e["name"] == ref or e["commit"]["sha"].startswith(ref) for e in entries):
                return
    raise ValueError(f"Cannot find {ref} in https://github.com/{repo_owner}/{repo_name}. "
                     "If it's a commit from a forked repo, please call hub.load() with forked repo directly.")


def _check_repo_is_trusted(repo_owner, repo_name, owner_name_branch, trust_repo):
    """torch's trust rule: listed in <hub_dir>/trusted_list, already downloaded, or a known owner; else ask."""
    hub_dir = get_dir()
    path = os.path.join(hub_dir, "trusted_list")
    if not os.path.exists(path):
        Path(path).touch()
    with open(path) as f:
        trusted = tuple(line.strip() for line in f)
    downloaded = next(os.walk(hub_dir))[1]  # a repository already in the cache counts as trusted
    owner_name = f"{repo_owner}_{repo_name}"
    is_trusted = owner_name in trusted or owner_name_branch in downloaded or repo_owner in _TRUSTED_REPO_OWNERS
    if trust_repo is False or (trust_repo == "check" and not is_trusted):
        answer = input(f"The repository {owner_name} does not belong to the list of trusted repositories and as such "
                       "cannot be downloaded. Do you trust this repository and wish to add it to the trusted list of "
                       "repositories (y/N)?")
        if answer.lower() in ("y", "yes"):
            if is_trusted:
                print("The repository is already trusted.")
        elif answer.lower() in ("n", "no", ""):
            raise Exception("Untrusted repository.")  # torch raises a bare Exception here
        else:
            raise ValueError(f"Unrecognized response {answer}.")
    if not is_trusted:
        with open(path, "a") as f:
            f.write(owner_name + "\n")


def _get_cache_or_reload(github, force_reload, trust_repo, verbose=True, skip_validation=False):
    """The directory of repository `github` in the cache, downloading its zip archive when absent."""
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    repo_owner, repo_name, ref = _parse_repo_info(github)
    # a branch name may hold "/", which must not become a path separator
    owner_name_branch = "_".join([repo_owner, repo_name, ref.replace("/", "_")])
    repo_dir = os.path.join(hub_dir, owner_name_branch)
    _check_repo_is_trusted(repo_owner, repo_name, owner_name_branch, trust_repo=trust_repo)
    if not force_reload and os.path.exists(repo_dir):
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    if not skip_validation:
        _validate_not_a_forked_repo(repo_owner, repo_name, ref)
    cached_zip = os.path.join(hub_dir, ref.replace("/", "_") + ".zip")
    _remove_if_exists(cached_zip)
    url = _git_archive_link(repo_owner, repo_name, ref)
    sys.stdout.write(f'Downloading: "{url}" to {cached_zip}\n')
    try:
        download_url_to_file(url, cached_zip, progress=False)
    except HTTPError as err:
        if err.code != 300:
            raise
        # 300: the ref is both a tag and a branch; take the branch, as git does
        warnings.warn(f"The ref {ref} is ambiguous. Perhaps it is both a tag and a branch in the repo? Torchhub will "
                      "now assume that it's a branch. You can disambiguate tags and branches by explicitly passing "
                      "refs/heads/branch_name or refs/tags/tag_name as the ref. That might require using "
                      "skip_validation=True.", stacklevel=2)
        download_url_to_file(_git_archive_link(repo_owner, repo_name, f"refs/heads/{ref}"), cached_zip,
                             progress=False)
    except HubDownloadError as err:
        raise HubDownloadError(f"{err} (torch.hub looks for the unpacked repository at {repo_dir})",
                               err.reason) from err
    with zipfile.ZipFile(cached_zip) as zf:
        extracted = os.path.join(hub_dir, zf.infolist()[0].filename)
        _remove_if_exists(extracted)
        _safe_extract_zip(zf, hub_dir)
    _remove_if_exists(cached_zip)
    _remove_if_exists(repo_dir)
    shutil.move(extracted, repo_dir)
    return repo_dir


def _check_dependencies(module):
    dependencies = _load_attr_from_module(module, VAR_DEPENDENCY)
    if dependencies is not None:
        missing = [name for name in dependencies if importlib.util.find_spec(name) is None]
        if missing:
            raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")


def _load_entry_from_hubconf(module, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    _check_dependencies(module)
    func = _load_attr_from_module(module, model)
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


def _import_hubconf(repo_dir):
    with _add_to_sys_path(repo_dir):
        return _import_module(MODULE_HUBCONF, os.path.join(repo_dir, MODULE_HUBCONF))


def list(github, force_reload=False, skip_validation=False, trust_repo="check", verbose=True):
    """The names of the public callables (entry points) in the repository's hubconf.py."""
    module = _import_hubconf(_get_cache_or_reload(github, force_reload, trust_repo, verbose=verbose,
                                                  skip_validation=skip_validation))
    return [name for name in dir(module) if callable(getattr(module, name)) and not name.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False, trust_repo="check"):
    """The docstring of entry point `model` of the repository's hubconf.py."""
    module = _import_hubconf(_get_cache_or_reload(github, force_reload, trust_repo, verbose=True,
                                                  skip_validation=skip_validation))
    return _load_entry_from_hubconf(module, model).__doc__


def _load_local(hubconf_dir, model, *args, **kwargs):
    with _add_to_sys_path(hubconf_dir):
        module = _import_module(MODULE_HUBCONF, os.path.join(hubconf_dir, MODULE_HUBCONF))
        entry = _load_entry_from_hubconf(module, model)
        return entry(*args, **kwargs)


def load(repo_or_dir, model, *args, source="github", trust_repo="check", force_reload=False, verbose=True,
         skip_validation=False, **kwargs):
    """Call entry point `model` of a hubconf.py with *args and **kwargs and return what it returns.

    source="local": repo_or_dir is a directory holding hubconf.py. source="github": repo_or_dir is
    "owner/name[:ref]", taken from the cache (<hub_dir>/<owner>_<name>_<ref>) or downloaded into it.
    """
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        repo_or_dir = _get_cache_or_reload(repo_or_dir, force_reload, trust_repo, verbose=verbose,
                                           skip_validation=skip_validation)
    return _load_local(repo_or_dir, model, *args, **kwargs)




def __getattr__(name):
    # torch.hub.tqdm: tqdm when installed, else the minimal bar (some libraries import it from here)
    if name == "tqdm":
        try:
            from tqdm import tqdm
        except ImportError:
            tqdm = _Progress
        return tqdm
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
