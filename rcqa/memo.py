"""A least-recently-used memo bounded by the bytes its results hold, not by their count: one 100,000-character
passage weighs as much as a thousand short ones, so a count bound lets a few long pastes hold gigabytes."""
from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Protocol, TypeVar, cast

Result = TypeVar("Result")
Returned = TypeVar("Returned", covariant=True)


class Memoized(Protocol[Returned]):
    """A memoized function of one string, with functools.lru_cache's cache_clear and the bytes its entries hold."""

    def __call__(self, argument: str) -> Returned: ...

    def cache_clear(self) -> None: ...

    def cache_bytes(self) -> int: ...


# size reads the result of whichever function is decorated, so its second argument is that function's result: Any
def memoize_by_size(max_bytes: int,
                    size: Callable[[str, Any], int]) -> Callable[[Callable[[str], Result]], Memoized[Result]]:
    """Memoize a function of one string; size(argument, result) is what an entry holds, in bytes (an estimate)."""

    def decorate(function: Callable[[str], Result]) -> Memoized[Result]:
        entries: OrderedDict[str, tuple[Result, int]] = OrderedDict()
        lock = threading.Lock()
        held = 0

        @functools.wraps(function)
        def memoized(argument: str) -> Result:
            nonlocal held
            with lock:
                if argument in entries:
                    entries.move_to_end(argument)
                    return entries[argument][0]
            result = function(argument)
            weight = size(argument, result)
            with lock:
                if weight <= max_bytes and argument not in entries:
                    entries[argument] = (result, weight)
                    held += weight
                    while held > max_bytes:
                        held -= entries.popitem(last=False)[1][1]
            return result

        def cache_clear() -> None:
            nonlocal held
            with lock:
                entries.clear()
                held = 0

        def cache_bytes() -> int:
            return held

        # attributes of the function, as functools.lru_cache sets them; Memoized names them for the callers
        memoized.cache_clear, memoized.cache_bytes = cache_clear, cache_bytes  # type: ignore[attr-defined]
        return cast(Memoized[Result], memoized)

    return decorate
