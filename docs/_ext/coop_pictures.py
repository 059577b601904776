"""Layout pictures in the docs, drawn by the library itself at build time.

``.. coop-explain:: load --algorithm transpose --threads 8 --items 4`` inlines the SVG that
``python -m cuda.coop explain load --algorithm transpose --threads 8 --items 4 --svg FILE`` writes.
``.. coop-explorer::`` takes one such argument line per content line and renders an interactive
explorer: a menu picks the picture, and pointing at a cell highlights the same tile element in every
step, so one value can be followed through the operation.
"""
from __future__ import annotations

import argparse
import html
import shlex

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx.errors import ExtensionError

from cuda.coop._cli.explain import add_parser, picture_for
from cuda.coop._cli.render import to_svg

_SCRIPT = """<script>
(function () {
  const root = document.currentScript.previousElementSibling;
  const menu = root.querySelector("select");
  const panes = root.querySelectorAll(".coop-picture");
  if (menu) menu.addEventListener("change", () => panes.forEach((p, i) => p.hidden = i != menu.value));
  root.addEventListener("mouseover", (event) => {
    const element = event.target.getAttribute && event.target.getAttribute("data-element");
    root.querySelectorAll("rect[data-element]").forEach((rect) => {
      rect.style.opacity = element === null || rect.getAttribute("data-element") === element ? "1" : "0.25";
    });
  });
  root.addEventListener("mouseleave", () => root.querySelectorAll("rect").forEach((r) => r.style.opacity = "1"));
})();
</script>"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m cuda.coop", add_help=False)
    add_parser(parser.add_subparsers(dest="command"))
    return parser


def render(arguments: str) -> str:
    """The SVG of one ``explain`` argument line (without the leading ``explain``)."""
    try:
        args = _parser().parse_args(["explain", *shlex.split(arguments)])
        return to_svg(picture_for(args))
    except (SystemExit, Exception) as exc:
        raise ExtensionError(f"cannot draw 'explain {arguments}': {exc}") from None


def _figure(svg: str, caption: str, hidden: bool = False) -> str:
    return (f'<figure class="coop-picture"{" hidden" if hidden else ""} style="overflow-x:auto;margin:0">'
            f'{svg.split("?>", 1)[-1]}<figcaption><code>python -m cuda.coop explain {html.escape(caption)}'
            "</code></figcaption></figure>")


class ExplainDirective(Directive):
    required_arguments = 1
    final_argument_whitespace = True

    def run(self) -> list:
        arguments = self.arguments[0]
        markup = f'<div class="coop-explorer">{_figure(render(arguments), arguments)}</div>{_SCRIPT}'
        return [nodes.raw("", markup, format="html")]


class ExplorerDirective(Directive):
    has_content = True

    def run(self) -> list:
        lines = [line.strip() for line in self.content if line.strip()]
        if not lines:
            raise self.error("coop-explorer needs one explain argument line per picture")
        options = "".join(f'<option value="{i}">{html.escape(line)}</option>' for i, line in enumerate(lines))
        figures = "".join(_figure(render(line), line, hidden=i > 0) for i, line in enumerate(lines))
        markup = (f'<div class="coop-explorer"><p><label>Picture: <select>{options}</select></label> '
                  "(point at a cell to follow its element)</p>" + figures + f"</div>{_SCRIPT}")
        return [nodes.raw("", markup, format="html")]


def setup(app) -> dict:  # noqa: ANN001
    app.add_directive("coop-explain", ExplainDirective)
    app.add_directive("coop-explorer", ExplorerDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
