"""``python -m cuda.coop COMMAND``: see ``python -m cuda.coop --help``."""
from __future__ import annotations

if __name__ == "__main__":
    from ._cli import main

    raise SystemExit(main())
