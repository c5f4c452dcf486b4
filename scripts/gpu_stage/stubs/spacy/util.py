import re


def _never(entries):
    return re.compile(r"(?!x)x")


compile_prefix_regex = compile_suffix_regex = compile_infix_regex = _never
