"""examples/_png.py: the PNG writer the examples use for their curves (no matplotlib)."""
import os
import sys
import zlib

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "examples"))
import _png  # noqa: E402


def test_write_and_read_back(tmp_path):
    rgb = bytes(range(256))[:4 * 3 * 2] * 1  # 4 x 2 pixels
    path = str(tmp_path / "a.png")
    _png.write_png(path, 4, 2, rgb)
    assert _png.read_png(path) == (4, 2, rgb)
    with open(path, "rb") as f:
        data = f.read()
    assert data.endswith(b"\x00\x00\x00\x00IEND" + zlib.crc32(b"IEND").to_bytes(4, "big"))
    with pytest.raises(ValueError, match="expected 24 bytes"):
        _png.write_png(path, 4, 2, rgb[:-1])
    corrupt = bytearray(data)
    corrupt[20] ^= 1  # inside IHDR: the CRC no longer matches
    with open(path, "wb") as f:
        f.write(corrupt)
    with pytest.raises(ValueError, match="bad CRC"):
        _png.read_png(path)


def test_canvas_lines_and_text(tmp_path):
    c = _png.Canvas(20, 10)
    c.line(0, 0, 19, 9, (255, 0, 0))
    assert c.pixels[0:3] == b"\xff\x00\x00" and c.pixels[-3:] == b"\xff\x00\x00"  # both end points
    c.text(0, 0, "1", (0, 0, 255), scale=1)  # glyph "1": 010/110/010/010/111
    px = lambda x, y: bytes(c.pixels[(y * 20 + x) * 3:(y * 20 + x) * 3 + 3])  # noqa: E731
    assert px(1, 0) == b"\x00\x00\xff" and px(0, 1) == b"\x00\x00\xff" and px(2, 4) == b"\x00\x00\xff"
    assert px(0, 2) == b"\xff\xff\xff"
    c.set(100, 100, (0, 0, 0))  # outside: ignored


def test_plot_curves(tmp_path):
    path = str(tmp_path / "p.png")
    _png.plot_curves(path, [("a", [0, 1, 2], [3.0, 2.0, float("nan")], (10, 20, 30)),
                            ("b", [0, 2], [2.5, 1.0], (40, 50, 60))], width=200, height=120, title="t")
    w, h, rgb = _png.read_png(path)
    assert (w, h) == (200, 120)
    colours = {rgb[i:i + 3] for i in range(0, len(rgb), 3)}
    assert b"\x0a\x14\x1e" in colours and b"\x28\x32\x3c" in colours
    with pytest.raises(ValueError, match="no finite points"):
        _png.plot_curves(path, [("a", [0], [float("nan")], (0, 0, 0))])
