"""What every result says about what it is of, and what every result can do: save itself, be loaded, and draw
itself. Attribution, Comparison (rcqa.faithfulness.compare), AnswerLens (rcqa.lens.readout) and Interventions
(rcqa.lens.interventions) are ResultHeaders: the example, the model (its name and fingerprint), its answer, and the
window and tokens the result reads."""
from __future__ import annotations

import os
import sys
import tempfile
import webbrowser
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from rcqa import drawing
from rcqa.types import storage
from rcqa.types.answers import Answer, Example, GoldAnswer


@dataclass
class ResultHeader:
    """The example, the model's name and fingerprint, the model's answer, and the window (and its tokens) the
    result reads. Each result type names its `kind`; its saved files say it, and load reads it back."""

    example: Example
    model: str
    fingerprint: str
    answer: Answer
    window: int
    tokens: list[str]

    kind: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.kind:
            storage.register_kind(cls.kind, cls)

    def header_dict(self) -> dict:
        return {"example": self.example.to_dict(), "model": self.model, "fingerprint": self.fingerprint,
                "answer": self.answer.to_dict(), "window": self.window, "tokens": self.tokens}

    @staticmethod
    def header_fields(data: dict) -> dict:
        """The header's fields (as keyword arguments) from header_dict's dictionary."""
        example = data["example"]
        return {"example": Example(**{**example, "answers": tuple(GoldAnswer(**a) for a in example["answers"])}),
                "model": data["model"], "fingerprint": data["fingerprint"],
                "answer": Answer.from_dict(data["answer"]), "window": data["window"], "tokens": data["tokens"]}

    def to_dict(self) -> dict:
        raise NotImplementedError

    @classmethod
    def from_dict(cls, data: dict) -> ResultHeader:
        raise NotImplementedError

    def stored_dict(self) -> dict:
        """What save writes as JSON: to_dict's fields, which from_dict reads back."""
        return self.to_dict()

    def save(self, path: str | Path) -> Path:
        """Write the whole result as .json (and an Attribution also as .npz); load or rcqa.load_result reads it."""
        return storage.save(self, path)

    @classmethod
    def load(cls, path: str | Path) -> ResultHeader:
        """The result a file save wrote; TypeError when the file holds another kind of result."""
        result = storage.load_result(path)
        if not isinstance(result, cls):
            raise TypeError(f"{Path(path).name} holds a {type(result).__name__}, not a {cls.__name__}")
        return result

    def figure(self, view: str | None = None, **options):
        """The Plotly figure of one of the result's views (its default when None), drawn by rcqa.figures."""
        return drawing.figure(self, view, **options)

    def show(self, view: str | None = None, **options):
        """figure(view, **options), shown where the result is used, and returned: see shown."""
        return shown(self.figure(view, **options), view or "figure")

    def __repr__(self) -> str:
        """One line: the question the result answers, and what the model answered; never its arrays (a result's
        fields run to megabytes). Each subclass is a dataclass(repr=False), so that this stays its repr."""
        said = repr(self.answer.text) if self.answer.text else "no answer"
        return (f"<{type(self).__name__} of {headline(self.example.question)!r} → {said} · model {self.model} "
                f"({self.fingerprint}){self._repr_details()}>")

    def _repr_details(self) -> str:
        """What a kind of result adds to its one-line repr, after " · "."""
        return ""

    def _repr_html_(self) -> str:
        """Jupyter's view of the result, as escaped HTML, drawn by rcqa.figures."""
        return drawing.html(self)


def headline(text: str, limit: int = 80) -> str:
    """The text on one line, cut after the last whole word that fits in `limit` characters, with an ellipsis."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    fits = line[:limit]  # a whole word that ends at limit - 1 keeps the space after it, and stays
    return (fits.rsplit(" ", 1)[0] if " " in fits else fits[:limit - 1]).rstrip(",;:") + "…"


def shown(figure: Any, view: str) -> Any:
    """A figure (or an HTML view: anything with write_html) shown where the result is used, and returned. In IPython
    (a notebook) it is only returned: the notebook draws the value of a cell. In a script, it is written to an HTML
    file in the temporary folder and opened in the browser, and one line on stderr says where the file is. Where no
    browser can open (a server with no display, CI), nothing is written and one line says how to save the figure."""
    if _in_ipython():
        return figure
    if not _has_display():
        print(f"rcqa: no display here to show the {view} on; save the figure that show returns with "
              f".write_html('{view}.html')", file=sys.stderr)
        return figure
    # a file, not plotly's fig.show(): its browser renderer serves the page once and blocks until a browser asks
    handle, name = tempfile.mkstemp(prefix=f"rcqa-{view}-", suffix=".html")
    os.close(handle)
    figure.write_html(name)
    opened = webbrowser.open(Path(name).as_uri())
    print(f"rcqa: the {view} {'opens in your browser from' if opened else 'is in'} {name}", file=sys.stderr)
    return figure


def _in_ipython() -> bool:
    ipython = sys.modules.get("IPython")  # never imported here: only an IPython already running counts
    return ipython is not None and ipython.get_ipython() is not None


def _has_display() -> bool:
    """Whether a browser window can open here: macOS and Windows have a desktop; elsewhere X11 or Wayland says so."""
    return sys.platform in ("darwin", "win32") or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
