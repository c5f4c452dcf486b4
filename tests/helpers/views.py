"""A View with some of its fields and settings chosen by name, as a page's widgets and a link set them."""
from rcqa.ui.view import View


def view_with(**chosen) -> View:
    """The default View with these fields: its own (model, ends, …) given to it, its settings' (span, steps, …)
    and its target set as a widget sets them."""
    own = View.__dataclass_fields__
    view = View(**{name: value for name, value in chosen.items() if name in own})
    for name, value in chosen.items():
        if name not in own:
            setattr(view, name, value)
    return view
