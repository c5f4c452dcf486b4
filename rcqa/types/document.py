"""What a typed JSON document that is no result of one example can do: be written to a .json file and read back
as its type. The run manifest, a dataset summary and a faithfulness report are documents; each keeps the JSON its
files have always held (to_dict), so that files written before they were typed still load."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Self


class Document:
    """to_dict / from_dict in each subclass; save and load here."""

    def to_dict(self) -> dict:
        raise NotImplementedError

    @classmethod
    def from_dict(cls, data: dict) -> Self:
        raise NotImplementedError

    def to_json(self) -> str:
        """The file's text (a document that has always been written indented says so here)."""
        return json.dumps(self.to_dict(), ensure_ascii=False)

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(self.to_json(), encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: str | Path) -> Self:
        """The document a file holds; ValueError, in one sentence, for one whose fields are not this type's."""
        path = Path(path)
        try:
            return cls.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except (KeyError, TypeError, AttributeError, ValueError):
            raise ValueError(f"{path.name[:80]} does not hold a {cls.__name__}: its fields are missing or "
                             "damaged") from None
