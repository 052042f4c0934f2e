"""Compare: Measurements laid out as torch's tables (one per label; rows = sub_label or stmt,
grouped by thread count; columns = description), replicates merged first."""
import enum

from . import common

__all__ = ["Colorize", "Compare"]

_BEST, _GOOD, _BAD, _VERY_BAD = "\033[92m", "\033[34m", "\033[2m\033[91m", "\033[31m"
_BOLD, _END = "\033[1m", "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _leading_digits(x):
    return int(common._f32(x).log10().ceil())


class _ColumnFormat:
    """Number format shared by one column: enough integer digits for its largest value, and
    either one decimal or (trimmed) the decimals its least precise entry supports."""

    def __init__(self, results, scale, trim, highlight):
        present = [r for r in results if r is not None]
        self.trim = trim
        self.highlight = highlight and any(r.has_warnings for r in present)
        digits = [_leading_digits(r.median / scale) for r in present]
        decimals = min(max(r.significant_figures - d, 0) for r, d in zip(present, digits)) if trim else 1
        width = max(digits) + decimals + (1 if decimals else 0)
        self.spec = f">{width}.{decimals}f"
        self.suffix_width = 7 if self.highlight else 0

    def text(self, value, sigfigs, spread):
        if value is None:
            return " " * len(self.text(1, sigfigs, None))
        if self.trim:
            value = common.trim_sigfig(value, sigfigs)
        note = f" (! {spread * 100:.0f}%)" if self.highlight and spread is not None else ""
        return format(value, self.spec) + format(note, f">{self.suffix_width}")


def _paint(segment, value, best):
    if value <= best * 1.01 or value <= best + 100e-9:
        return _BEST + _BOLD + segment + _END * 2
    if value <= best * 1.1:
        return _GOOD + _BOLD + segment + _END * 2
    if value >= best * 5:
        return _VERY_BAD + _BOLD + segment + _END * 2
    if value >= best * 2:
        return _BAD + segment + _END * 2
    return segment


def _render_table(results, colorize, trim, highlight):
    """One label's table, as text ending in a newline."""
    unit, scale = common.select_unit(min(r.median for r in results))

    def row_key(m):
        return m.num_threads, m.env, m.as_row_name

    row_keys = common.ordered_unique(row_key(m) for m in results)
    row_keys.sort(key=lambda k: (k[0], "" if k[1] is None else k[1]))  # threads, env; stmt order kept
    col_keys = common.ordered_unique(m.description for m in results)
    grid = {(row_key(m), m.description): m for m in results}
    rows = [[grid.get((rk, ck)) for ck in col_keys] for rk in row_keys]

    envs = {m.env for m in results}
    show_env = len(envs) > 1
    env_width = max(len(e or "") for e in envs) if show_env else 0

    # row groups: consecutive rows with one thread count
    group_of, groups, separator = [], [], []
    previous_threads, previous_env = None, ""
    show_env_on = []
    for (threads, env, _), row in zip(row_keys, rows):
        new_group = threads != previous_threads
        if new_group:
            previous_threads, previous_env = threads, ""
            groups.append([])
        group_of.append(len(groups) - 1)
        groups[-1].append(row)
        separator.append(threads if new_group else None)
        show_env_on.append(show_env and env != previous_env)
        previous_env = env

    formats = [_ColumnFormat([row[j] for row in rows], scale, trim, highlight) for j in range(len(col_keys))]

    cells = [[""] + ["" if c is None else str(c) for c in col_keys]]
    for i, row in enumerate(rows):
        first = next(m for m in row if m is not None)
        env = f"({first.env})" if show_env_on[i] else ""
        line = ["  " + env.ljust(env_width + 4) + first.as_row_name]
        for m, fmt in zip(row, formats):
            if m is None:
                line.append(fmt.text(None, 1, None))
            else:
                line.append(fmt.text(m.median / scale, m.significant_figures,
                                     m.iqr / m.median if m.has_warnings else None))
        cells.append(line)
    ncols = max(len(c) for c in cells)
    for c in cells:
        c.extend([""] * (ncols - len(c)))
    widths = [max(len(c[j]) for c in cells) for j in range(ncols)]

    header = "  |  ".join(text.center(w) for text, w in zip(cells[0], widths))
    lines = [header]
    for i, row in enumerate(rows):
        if separator[i] is not None:
            lines.append(f"{separator[i]} threads: ".ljust(len(header), "-"))
        if colorize == Colorize.ROWWISE:
            best = [min(m.median for m in row if m is not None)] * len(row)
        elif colorize == Colorize.COLUMNWISE:
            best = []
            for j in range(len(row)):
                medians = [r[j].median for r in groups[group_of[i]] if r[j] is not None]
                best.append(min(medians) if medians else None)
        else:
            best = [None] * len(row)
        parts = [cells[i + 1][0].ljust(widths[0])]
        for text, width, m, b in zip(cells[i + 1][1:], widths[1:], row, best):
            text = text.center(width)
            if colorize != Colorize.NONE and m is not None and b is not None:
                text = _paint(text, m.median, b)
            parts.append(text)
        lines.append("  |  ".join(parts))

    label = results[0].label
    out = "[" + f" {label or ''} ".center(len(header) - 2, "-") + "]\n"
    out += "\n".join(lines) + "\n\n"
    out += f"Times are in {common.unit_to_english(unit)}s ({unit}).\n"
    if highlight and any(m.has_warnings for m in results):
        out += "(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
    return out


class Compare:
    """Tables of Measurements; print(compare) or compare.print() shows them.

    trim_significant_figures(), colorize(rowwise=False) and highlight_warnings() change the
    rendering as in torch.
    """

    def __init__(self, results):
        self._results = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self):
        return "\n".join(self._render())

    def extend_results(self, results):
        """Adds Measurements (anything else raises ValueError)."""
        for r in results:
            if not isinstance(r, common.Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self):
        self._trim_significant_figures = True

    def colorize(self, rowwise=False):
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self):
        self._highlight_warnings = True

    def print(self):
        print(str(self))

    def _render(self):
        by_label = {}
        for m in common.Measurement.merge(self._results):
            by_label.setdefault(m.label, []).append(m)
        return [_render_table(group, self._colorize, self._trim_significant_figures, self._highlight_warnings)
                for group in by_label.values()]


