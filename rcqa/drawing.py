"""How a result draws itself without knowing the figures: rcqa.figures registers, per result type, the function that
draws one of its views and the one that writes its Jupyter HTML; a result's show and _repr_html_ ask here. Drawing
stays apart from the result, as in Captum and inseq, and no module climbs the layers to reach the figures.

The figures load only when a result is first drawn (plotly is heavy): rcqa/__init__ hands this registry the
function that imports them (on_first_draw), and that runs once, the first time a result type is not yet known."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Drawer:
    """A result type's figures: figure(result, view, **options) returns a Plotly figure; html(result) escaped HTML."""

    figure: Callable[..., Any]
    html: Callable[[Any], str]


_drawers: dict[type, Drawer] = {}
_loaders: list[Callable[[], None]] = []


def register(result_type: type, figure: Callable[..., Any], html: Callable[[Any], str]) -> None:
    """Draw results of result_type (and of its subclasses) with these functions."""
    _drawers[result_type] = Drawer(figure, html)


def on_first_draw(load: Callable[[], None]) -> None:
    """Run `load` (once) the first time a result is drawn whose type has no drawer yet."""
    _loaders.append(load)


def drawer(result: object) -> Drawer:
    """The drawer of the result's type or the nearest base type that has one; TypeError when none does."""
    while _loaders and not _find(type(result)):
        _loaders.pop(0)()
    found = _find(type(result))
    if found is None:
        raise TypeError(f"no figures draw a {type(result).__name__}; import rcqa.figures to register them")
    return found


def _find(result_type: type) -> Drawer | None:
    return next((_drawers[base] for base in result_type.__mro__ if base in _drawers), None)


def figure(result: object, view: str | None = None, **options):
    """The Plotly figure of one of the result's views (its default view when None)."""
    draw = drawer(result).figure
    return draw(result, **options) if view is None else draw(result, view, **options)


def html(result: object) -> str:
    """The result as Jupyter shows it: escaped HTML."""
    return drawer(result).html(result)
