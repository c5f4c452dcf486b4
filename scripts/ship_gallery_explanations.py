"""Write the gallery's explanations shipped with the package (rcqa.attribution.shipped): every gallery example,
explained by the embedded default model with the settings the dashboard opens on, for each layer-wise method, and
the runner-up contrast Side by side opens on beside it. Run it again after the default model, the gallery, the
engine's numbers (rcqa.attribution.cache.FORMAT) or the dashboard's opening settings change;
tests/attribution/test_shipped.py fails until it is. Files already there are kept; files no longer wanted go.
Then check every one against a fresh explanation (the default test run checks the first screens and one of each
other kind):

    python scripts/ship_gallery_explanations.py
    RCQA_SHIPPED_ALL=1 python -m pytest tests/attribution/test_shipped.py
"""
import time

from rcqa.attribution.shipped import SHIPPED_DIR, ship, shipped_path
from rcqa.gallery import GALLERY
from rcqa.model import load_model
from rcqa.ui.view import opening_settings


def main() -> None:
    started = time.perf_counter()
    qa_model = load_model("default")
    settings = opening_settings()
    wanted = {shipped_path(qa_model, example, chosen) for example in GALLERY for chosen in settings}
    for stale in SHIPPED_DIR.glob("*.npz"):
        if stale not in wanted:
            stale.unlink()
    written = ship(qa_model, GALLERY, settings)
    size = sum(path.stat().st_size for path in written)
    print(f"{len(written)} explanations, {size / 2**20:.2f} MB, in {time.perf_counter() - started:.0f} s -> "
          f"{SHIPPED_DIR}")


if __name__ == "__main__":
    main()
