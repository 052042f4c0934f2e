"""A tiny dependency-free plotter for the examples: an RGB raster with lines and a 3x5 pixel font,
written as a PNG with zlib and struct (no matplotlib, no PIL).

    plot_curves("loss.png", [("train", xs, ys, (31, 119, 180)), ("val", xs2, ys2, (255, 127, 14))],
                title="GPT loss", xlabel="step", ylabel="loss")

write_png / read_png_header are also used by the tests to check the file.
"""
import math
import struct
import zlib

__all__ = ["Canvas", "write_png", "read_png", "plot_curves"]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# 3x5 glyphs, one string of 15 bits per character (rows top to bottom); text is drawn upper-cased.
_FONT = {
    "A": "010101111101101", "B": "110101110101110", "C": "011100100100011", "D": "110101101101110",
    "E": "111100110100111", "F": "111100110100100", "G": "011100101101011", "H": "101101111101101",
    "I": "111010010010111", "J": "001001001101010", "K": "101101110101101", "L": "100100100100111",
    "M": "101111111101101", "N": "110101101101101", "O": "010101101101010", "P": "110101110100100",
    "Q": "010101101110011", "R": "110101110101101", "S": "011100010001110", "T": "111010010010010",
    "U": "101101101101111", "V": "101101101101010", "W": "101101111111101", "X": "101101010101101",
    "Y": "101101010010010", "Z": "111001010100111",
    "0": "111101101101111", "1": "010110010010111", "2": "110001010100111", "3": "110001010001110",
    "4": "101101111001001", "5": "111100110001110", "6": "011100111101111", "7": "111001010010010",
    "8": "111101111101111", "9": "111101111001110",
    ".": "000000000000010", ",": "000000000010100", "-": "000000111000000", "+": "000010111010000",
    "/": "001001010100100", ":": "000010000010000", "=": "000111000111000", "(": "010100100100010",
    ")": "010001001001010", "_": "000000000000111", "%": "101001010100101", " ": "0" * 15,
}


def _chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def write_png(path, width, height, rgb):
    """Write width x height 8-bit RGB pixels (bytes, row-major, 3 per pixel) as a PNG file."""
    if len(rgb) != width * height * 3:
        raise ValueError(f"write_png: expected {width * height * 3} bytes for {width}x{height} RGB, got {len(rgb)}")
    stride = width * 3
    # Each scanline starts with its filter type (0: none).
    raw = b"".join(b"\x00" + bytes(rgb[r * stride:(r + 1) * stride]) for r in range(height))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8 bits, truecolour, deflate, no interlace
    with open(path, "wb") as f:
        f.write(PNG_SIGNATURE + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", zlib.compress(raw, 9)) + _chunk(b"IEND", b""))


def read_png(path):
    """(width, height, rgb bytes) of a PNG written by write_png (8-bit RGB, filter 0); checks CRCs."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != PNG_SIGNATURE:
        raise ValueError(f"{path}: not a PNG file")
    pos, chunks = 8, []
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        if zlib.crc32(kind + body) & 0xFFFFFFFF != crc:
            raise ValueError(f"{path}: bad CRC in chunk {kind!r}")
        chunks.append((kind, body))
        pos += 12 + n
    if chunks[0][0] != b"IHDR" or chunks[-1][0] != b"IEND":
        raise ValueError(f"{path}: chunks must start with IHDR and end with IEND")
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    if (depth, colour, interlace) != (8, 2, 0):
        raise ValueError(f"{path}: only 8-bit RGB non-interlaced PNGs are read")
    raw = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    stride = width * 3
    if len(raw) != height * (stride + 1):
        raise ValueError(f"{path}: IDAT holds {len(raw)} bytes, expected {height * (stride + 1)}")
    rows = []
    for r in range(height):
        line = raw[r * (stride + 1):(r + 1) * (stride + 1)]
        if line[0] != 0:
            raise ValueError(f"{path}: row {r} uses filter {line[0]} (only 0 is read)")
        rows.append(line[1:])
    return width, height, b"".join(rows)


class Canvas:
    """An RGB raster, white by default; (0, 0) is the top-left pixel."""

    def __init__(self, width, height, background=(255, 255, 255)):
        self.width, self.height = width, height
        self.pixels = bytearray(bytes(background) * (width * height))

    def set(self, x, y, colour):
        if 0 <= x < self.width and 0 <= y < self.height:
            i = (y * self.width + x) * 3
            self.pixels[i:i + 3] = bytes(colour)

    def rect(self, x0, y0, x1, y1, colour):
        """Fill the rectangle with corners (x0, y0) and (x1, y1), inclusive."""
        for y in range(max(0, min(y0, y1)), min(self.height, max(y0, y1) + 1)):
            for x in range(max(0, min(x0, x1)), min(self.width, max(x0, x1) + 1)):
                self.set(x, y, colour)

    def line(self, x0, y0, x1, y1, colour, width=1):
        """Bresenham's line; width > 1 stamps a square brush at every point."""
        x0, y0, x1, y1 = int(round(x0)), int(round(y0)), int(round(x1)), int(round(y1))
        dx, dy = abs(x1 - x0), -abs(y1 - y0)
        sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
        err, lo = dx + dy, -((width - 1) // 2)
        while True:
            for oy in range(lo, lo + width):
                for ox in range(lo, lo + width):
                    self.set(x0 + ox, y0 + oy, colour)
            if x0 == x1 and y0 == y1:
                return
            e2 = 2 * err
            if e2 >= dy:
                err += dy
                x0 += sx
            if e2 <= dx:
                err += dx
                y0 += sy

    def text(self, x, y, s, colour=(0, 0, 0), scale=2):
        """Draw s with its top-left corner at (x, y); each glyph is 3x5 cells of scale pixels, 1 cell apart."""
        for ch in s.upper():
            bits = _FONT.get(ch, _FONT[" "])
            for k, b in enumerate(bits):
                if b == "1":
                    r, c = divmod(k, 3)
                    x0, y0 = x + c * scale, y + r * scale
                    self.rect(x0, y0, x0 + scale - 1, y0 + scale - 1, colour)
            x += 4 * scale

    @staticmethod
    def text_width(s, scale=2):
        return max(0, 4 * scale * len(s) - scale)

    def save(self, path):
        write_png(path, self.width, self.height, self.pixels)


def _nice_ticks(lo, hi, count=5):
    """About count round tick values covering [lo, hi]."""
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / max(1, count)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    ticks, t = [], first
    while t <= hi + 1e-9 * step:
        ticks.append(t)
        t = first + len(ticks) * step
    return ticks, step


def _fmt_tick(v, step):
    if step >= 1 and abs(v) >= 1e4:
        return f"{v / 1000:g}k"
    decimals = max(0, -int(math.floor(math.log10(step)))) if step < 1 else 0
    return f"{v:.{decimals}f}"


def plot_curves(path, series, width=720, height=440, title="", xlabel="", ylabel=""):
    """Plot series [(label, xs, ys, (r, g, b)), ...] as polylines with axes, ticks, a legend; write a PNG."""
    pts = [(x, y) for _, xs, ys, _ in series for x, y in zip(xs, ys) if math.isfinite(y)]
    if not pts:
        raise ValueError("plot_curves: no finite points to plot")
    x_lo, x_hi = min(p[0] for p in pts), max(p[0] for p in pts)
    y_lo, y_hi = min(p[1] for p in pts), max(p[1] for p in pts)
    if x_hi == x_lo:
        x_hi = x_lo + 1
    pad = 0.05 * (y_hi - y_lo or 1.0)
    y_lo, y_hi = y_lo - pad, y_hi + pad
    left, right, top, bottom = 70, 20, 40, 50
    pw, ph = width - left - right, height - top - bottom

    def sx(x):
        return left + (x - x_lo) / (x_hi - x_lo) * pw

    def sy(y):
        return top + ph - (y - y_lo) / (y_hi - y_lo) * ph

    c = Canvas(width, height)
    grid, axis, ink = (228, 228, 228), (60, 60, 60), (30, 30, 30)
    yt, ystep = _nice_ticks(y_lo, y_hi, 6)
    for v in yt:
        y = int(round(sy(v)))
        c.line(left, y, left + pw, y, grid)
        label = _fmt_tick(v, ystep)
        c.text(left - 8 - Canvas.text_width(label), y - 5, label, ink)
    xt, xstep = _nice_ticks(x_lo, x_hi, 6)
    for v in xt:
        x = int(round(sx(v)))
        c.line(x, top, x, top + ph, grid)
        label = _fmt_tick(v, xstep)
        c.text(x - Canvas.text_width(label) // 2, top + ph + 8, label, ink)
    c.line(left, top, left, top + ph, axis)
    c.line(left, top + ph, left + pw, top + ph, axis)
    for _, xs, ys, colour in series:
        prev = None
        for x, y in zip(xs, ys):
            if not math.isfinite(y):
                prev = None
                continue
            cur = (sx(x), sy(y))
            if prev is not None:
                c.line(prev[0], prev[1], cur[0], cur[1], colour, width=2)
            elif len(xs) == 1:
                c.rect(int(cur[0]) - 2, int(cur[1]) - 2, int(cur[0]) + 2, int(cur[1]) + 2, colour)
            prev = cur
    c.text((width - Canvas.text_width(title, 3)) // 2, 10, title, ink, scale=3)
    c.text(left + (pw - Canvas.text_width(xlabel)) // 2, height - 20, xlabel, ink)
    c.text(8, top - 20, ylabel, ink)
    # Legend, top right: a colour swatch and the label per series.
    lx = left + pw - 10 - max(Canvas.text_width(s[0]) for s in series) - 30
    for k, (label, _, _, colour) in enumerate(series):
        ly = top + 12 + 18 * k
        c.rect(lx, ly + 3, lx + 20, ly + 6, colour)
        c.text(lx + 28, ly, label, ink)
    c.save(path)
    return path
