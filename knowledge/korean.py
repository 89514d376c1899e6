"""The Korean morphological analyser (Kiwi), shared by the knowledge index and the graphs.

It lives in the lowest layer because the BM25 index needs it; the graphs import it from here.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kiwipiepy import Kiwi


@cache
def get_kiwi() -> Kiwi:
    """The process-wide Kiwi analyser, built on first use (loading its model takes ~2 s)."""
    from kiwipiepy import Kiwi

    return Kiwi()
