"""Shared set-up for the CLI jobs: logging to stderr, clean error exits."""

from __future__ import annotations

import logging
from typing import Callable


def run_main(main: Callable[[list[str] | None], int], argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        return main(argv)
    except (ValueError, FileNotFoundError) as exc:  # InputError, CorpusError are ValueErrors
        logging.getLogger("semanno").error("%s", exc)
        return 2
    except KeyboardInterrupt:
        logging.getLogger("semanno").error("interrupted; rerun the same command to resume")
        return 130

