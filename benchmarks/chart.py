"""The throughput chart: bars per kernel, one colour per implementation, a line at the copy ceiling.

matplotlib draws it when installed; otherwise a small NumPy rasteriser writes the PNG
itself (zlib + struct), labelling kernel groups and the axis with a 3x5 digit font.
"""
from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np

from .report import IMPL_NAMES, ceiling, kernel_order, throughput

COLOURS = {"coop": (31, 119, 180), "cub_cpp": (255, 127, 14), "handwritten": (44, 160, 44),
           "triton": (148, 103, 189), "copy": (127, 127, 127), "read": (140, 86, 75)}
LINE = (214, 39, 40)


def draw(records: list[dict], path: Path) -> bool:
    """Write the chart; False when there is nothing to draw."""
    groups = _groups(records)
    if not groups:
        return False
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot  # noqa: F401
    except Exception:
        _draw_numpy(groups, ceiling(records), path)
    else:
        _draw_matplotlib(groups, ceiling(records), path)
    return True


def _groups(records: list[dict]) -> list[tuple[int, str, list[tuple[str, float]]]]:
    by = {}
    for r in throughput(records):
        if r.get("verified"):  # a kernel that wrote the wrong output has no meaningful bar
            by.setdefault(r["kernel"], []).append((r["impl"], r["gbps"]))
    order = list(IMPL_NAMES)
    return [(i + 1, k, sorted(by[k], key=lambda b: order.index(b[0])))
            for i, k in enumerate(kernel_order(records)) if k in by]


ROW_KERNELS = 16  # kernels per panel: long runs wrap into stacked panels that stay readable


def _draw_matplotlib(groups, top: float | None, path: Path) -> None:
    import matplotlib.pyplot as plt

    rows = [groups[i:i + ROW_KERNELS] for i in range(0, len(groups), ROW_KERNELS)]
    extent = max(sum(len(g[2]) + 1 for g in row) for row in rows)  # one bar width in every panel
    width = max(8, 0.42 * extent)
    fig, axes = plt.subplots(len(rows), 1, figsize=(width, 5.2 * len(rows)), squeeze=False)
    used = set()
    for ax, row in zip(axes[:, 0], rows):
        x, ticks, labels = 0.0, [], []
        for index, kernel, bars in row:
            start = x
            for impl, value in bars:
                ax.bar(x, value, width=0.9, color=[c / 255 for c in COLOURS[impl]],
                       label=IMPL_NAMES[impl] if impl not in used else None)
                used.add(impl)
                x += 1
            ticks.append((start + x - 1) / 2)
            labels.append(f"{index} {kernel}")
            x += 1
        if top:
            ax.axhline(top, color=[c / 255 for c in LINE], linewidth=1.5,
                       label=f"copy ceiling {top:.0f} GB/s" if ax is axes[0, 0] else None)
        ax.set_xlim(-1, extent)
        ax.set_xticks(ticks)
        ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
        ax.set_ylabel("GB/s (read + write)")
    fig.legend(fontsize=8, loc="upper right")
    fig.tight_layout(rect=(0, 0, 0.93, 1))
    fig.savefig(path, dpi=100)
    plt.close(fig)


# --- fallback without matplotlib ---------------------------------------------------------

_DIGITS = ["111101101101111", "010110010010111", "111001111100111", "111001111001111", "101101111001001",
           "111100111001111", "111100111101111", "111001001001001", "111101111101111", "111101111001111"]


def _text(img: np.ndarray, x: int, y: int, text: str, scale: int = 2, colour=(0, 0, 0)) -> None:
    """Digits only, 3x5 cells, top-left at (x, y)."""
    for ch in text:
        if ch.isdigit():
            cells = np.array([int(b) for b in _DIGITS[int(ch)]], dtype=bool).reshape(5, 3)
            block = np.kron(cells, np.ones((scale, scale), dtype=bool))
            h, w = block.shape
            if 0 <= y and y + h <= img.shape[0] and 0 <= x and x + w <= img.shape[1]:
                img[y:y + h, x:x + w][block] = colour
        x += 4 * scale


def _draw_numpy(groups, top: float | None, path: Path) -> None:
    bar, gap, left, bottom, height = 10, 10, 60, 30, 420
    width = left + sum(len(g[2]) * bar + gap for g in groups) + 20
    img = np.full((height + bottom + 20, width, 3), 255, dtype=np.uint8)
    y0 = 10 + height  # pixel row of 0 GB/s
    peak = max([v for g in groups for _, v in g[2]] + [top or 0.0, 1e-9])
    step = next(m * 10 ** e for e in range(-3, 9) for m in (1, 2, 5) if m * 10 ** e >= peak / 8)
    ticks = int(peak / step) + 1
    scale_max = step * ticks
    to_y = lambda v: int(round(y0 - v / scale_max * height))  # noqa: E731
    for i in range(ticks + 1):  # at most nine grid lines, labelled in GB/s
        tick = i * step
        y = to_y(tick)
        img[y, left:width - 10] = (225, 225, 225)
        _text(img, 4, y - 5, f"{tick:.0f}" if step >= 1 else "")
    x = left + gap // 2
    for index, _, bars in groups:
        start = x
        for impl, value in bars:
            img[to_y(value):y0, x:x + bar - 1] = COLOURS[impl]
            x += bar
        fits = len(str(index)) * 8 <= len(bars) * bar + gap  # 2x digits are 8 px apart
        _text(img, start, y0 + 6, str(index), scale=2 if fits else 1)
        x += gap
    img[10:y0 + 1, left - 1] = (0, 0, 0)
    img[y0, left - 1:width - 10] = (0, 0, 0)
    if top:
        y = to_y(top)
        img[y - 1:y + 1, left:width - 10] = LINE
    _write_png(path, img)


def _write_png(path: Path, rgb: np.ndarray) -> None:
    h, w, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[row].tobytes() for row in range(h))  # filter type 0 per scanline

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)  # 8-bit RGB, no interlace
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9))
                     + chunk(b"IEND", b""))
