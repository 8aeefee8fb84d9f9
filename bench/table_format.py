"""Number formatting shared by the bench/*_table.py scripts' Markdown tables."""
import math


def fmt(x, digits=3):
    """A number for a Markdown table ('—' for none)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if abs(x) >= 10 ** digits:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}" if abs(x) < 1 else f"{x:.{digits + 1}g}"
