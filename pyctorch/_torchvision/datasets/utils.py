"""Downloading and checking dataset files: urllib, hashlib, tarfile/zipfile/gzip from the standard library."""
import gzip
import hashlib
import os
import shutil
import tarfile
import urllib.request
import zipfile


def calculate_md5(fpath, chunk_size=1024 * 1024):
    md5 = hashlib.md5(usedforsecurity=False)
    with open(fpath, "rb") as f:
        for chunk in iter(lambda: f.read(chunk_size), b""):
            md5.update(chunk)
    return md5.hexdigest()


def check_integrity(fpath, md5=None):
    """The file exists and (when md5 is given) has that MD5."""
    if not os.path.isfile(fpath):
        return False
    return md5 is None or calculate_md5(fpath) == md5


def download_url(url, root, filename=None, md5=None):
    """Fetch `url` into root/filename unless a file with the right MD5 is there already."""
    root = os.path.expanduser(root)
    filename = filename or os.path.basename(url)
    fpath = os.path.join(root, filename)
    os.makedirs(root, exist_ok=True)
    if check_integrity(fpath, md5):
        return
    partial = fpath + ".part"
    with urllib.request.urlopen(urllib.request.Request(url, headers={"User-Agent": "pyctorch"})) as response, \
            open(partial, "wb") as out:
        shutil.copyfileobj(response, out)
    os.replace(partial, fpath)
    if not check_integrity(fpath, md5):
        raise RuntimeError("File not found or corrupted.")


def extract_archive(from_path, to_path=None, remove_finished=False):
    """Unpack a .tar(.gz/.bz2/.xz), .tgz, .zip or single-file .gz archive; returns the folder."""
    to_path = to_path or os.path.dirname(from_path)
    name = from_path.lower()
    if name.endswith((".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")):
        with tarfile.open(from_path) as tar:
            tar.extractall(to_path, filter="data")
    elif name.endswith(".zip"):
        with zipfile.ZipFile(from_path) as z:
            z.extractall(to_path)
    elif name.endswith(".gz"):
        target = os.path.join(to_path, os.path.basename(from_path)[:-3])
        with gzip.open(from_path, "rb") as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst)
    else:
        raise RuntimeError(f"Extraction of {from_path} not supported")
    if remove_finished:
        os.remove(from_path)
    return to_path


def download_and_extract_archive(url, download_root, extract_root=None, filename=None, md5=None,
                                 remove_finished=False):
    download_root = os.path.expanduser(download_root)
    extract_root = extract_root or download_root
    filename = filename or os.path.basename(url)
    download_url(url, download_root, filename, md5)
    extract_archive(os.path.join(download_root, filename), extract_root, remove_finished)
