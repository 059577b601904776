"""Pictures of who holds what: a grid of members x slots per step, drawn as text or as SVG."""
from __future__ import annotations

from dataclasses import dataclass, field
from xml.sax.saxutils import escape

UNSPECIFIED = "-"


@dataclass(frozen=True)
class Cell:
    """One slot of one member: its label, and its colour as an index on the picture's scale (None: grey, for an
    unspecified or unused slot)."""

    label: str
    colour: int | None = None


@dataclass(frozen=True)
class Panel:
    """One step: a caption, column headers and one row of cells per member."""

    caption: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, tuple[Cell, ...]], ...]  # (member label, its cells)


@dataclass(frozen=True)
class Picture:
    title: str
    panels: tuple[Panel, ...]
    colour_count: int  # length of the colour scale (e.g. the tile size)
    notes: tuple[str, ...] = field(default_factory=tuple)


# ---------------------------------------------------------------- text

def to_text(picture: Picture) -> str:
    lines = [picture.title]
    for number, panel in enumerate(picture.panels, 1):
        lines.append("")
        lines.append(f"{number}. {panel.caption}" if len(picture.panels) > 1 else panel.caption)
        labels = [label for label, _ in panel.rows]
        label_width = max(len(label) for label in labels)
        widths = [max([len(header)] + [len(cells[c].label) for _, cells in panel.rows])
                  for c, header in enumerate(panel.columns)]
        header = " " * (label_width + 2) + "  ".join(h.rjust(w) for h, w in zip(panel.columns, widths, strict=True))
        lines.append(header.rstrip())
        for label, cells in panel.rows:
            body = "  ".join(cell.label.rjust(w) for cell, w in zip(cells, widths, strict=True))
            lines.append(f"{label.ljust(label_width)}  {body}".rstrip())
    if picture.notes:
        lines.append("")
        lines.extend(picture.notes)
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- SVG

_CHAR = 7.8  # advance of one character of a 13px monospace font
_ROW = 22
_PAD = 8


def colour(index: int | None, count: int) -> str:
    """A hue from red (index 0) to violet (the last index), so neighbouring tile positions look alike and the
    layout's order shows as a gradient."""
    if index is None:
        return "#e4e4e4"
    hue = 0 if count <= 1 else round(280 * index / (count - 1))
    return f"hsl({hue}, 70%, 78%)"


def to_svg(picture: Picture) -> str:
    """The picture as a standalone SVG document (a grid per step, members down, slots across)."""
    parts: list[str] = []
    y = _PAD + 16
    parts.append(f'<text x="{_PAD}" y="{y}" font-weight="bold">{escape(picture.title)}</text>')
    width = _PAD * 2 + len(picture.title) * _CHAR
    for number, panel in enumerate(picture.panels, 1):
        caption = f"{number}. {panel.caption}" if len(picture.panels) > 1 else panel.caption
        y += _ROW + 6
        parts.append(f'<text x="{_PAD}" y="{y}">{escape(caption)}</text>')
        width = max(width, _PAD * 2 + len(caption) * _CHAR)
        label_width = max(len(label) for label, _ in panel.rows) * _CHAR + _PAD * 2
        cell_width = max(36.0, max(len(c.label) for _, cells in panel.rows for c in cells) * _CHAR + 12,
                         max(len(h) for h in panel.columns) * _CHAR + 8)
        y += 8
        x0 = _PAD + label_width
        for column, header in enumerate(panel.columns):
            cx = x0 + column * cell_width + cell_width / 2
            parts.append(f'<text x="{cx:.1f}" y="{y + 14}" text-anchor="middle" fill="#555">{escape(header)}</text>')
        y += _ROW
        for label, cells in panel.rows:
            parts.append(f'<text x="{_PAD}" y="{y + 15}">{escape(label)}</text>')
            for column, cell in enumerate(cells):
                x = x0 + column * cell_width
                # data-element names the tile element, so an interactive page can follow one value across steps
                element = "" if cell.colour is None else f' data-element="{cell.colour}"'
                parts.append(f'<rect x="{x:.1f}" y="{y}" width="{cell_width:.1f}" height="{_ROW}" '
                             f'fill="{colour(cell.colour, picture.colour_count)}" stroke="#fff"{element}/>')
                parts.append(f'<text x="{x + cell_width / 2:.1f}" y="{y + 15}" text-anchor="middle"{element}>'
                             f'{escape(cell.label)}</text>')
            y += _ROW
        width = max(width, x0 + len(panel.columns) * cell_width + _PAD)
    for note in picture.notes:
        y += _ROW
        parts.append(f'<text x="{_PAD}" y="{y}" fill="#333">{escape(note)}</text>')
        width = max(width, _PAD * 2 + len(note) * _CHAR)
    height = y + _PAD * 2
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="monospace" font-size="13">\n'
            f"<title>{escape(picture.title)}</title>\n"
            f'<rect width="100%" height="100%" fill="#fff"/>\n' + "\n".join(parts) + "\n</svg>\n")
