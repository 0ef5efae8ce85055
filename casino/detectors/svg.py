"""A detector's chart (``frame.Chart``, or its stored JSON) as inline SVG for the admin: drawn on
the server, no script, no outside resource (the admin must work on a closed network, and a
picture in a record's page should be what the record says, not what a library renders later).

>>> from casino.detectors.frame import Chart
>>> picture = svg(Chart("bars", "hold", ["14h", "15h"], [3.0, -1.0], low=[-5, -5], high=[8, 8]))
>>> picture.count("<rect"), "14h" in picture
(4, True)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from casino.detectors.frame import Chart

WIDTH, HEIGHT = 640, 200
LEFT, RIGHT, TOP, BOTTOM = 56, 12, 24, 36
BAR, BAND, MARK, AXIS = "#2c3e50", "#d6eaf8", "#2980b9", "#888"


def _numbers(values: Sequence[Any]) -> list[float]:
    return [float(v) for v in values]


def chart_of(data: Chart | Mapping[str, Any]) -> Chart:
    """A chart from its stored JSON (an anomaly's evidence keeps figures as text)."""
    if isinstance(data, Chart):
        return data
    return Chart(
        kind=str(data.get("kind", "bars")),
        title=str(data.get("title", "")),
        labels=[str(label) for label in data.get("labels", [])],
        values=_numbers(data.get("values", [])),
        expected=_numbers(data.get("expected", [])),
        low=_numbers(data.get("low", [])),
        high=_numbers(data.get("high", [])),
        unit=str(data.get("unit", "")),
    )


def _label(value: float, unit: str) -> str:
    return f"{value:,.4g}{unit}".replace(",", "\u202f")


def svg(data: Chart | Mapping[str, Any], *, width: int = WIDTH, height: int = HEIGHT) -> SafeString:
    """Bars (with an optional band and expected mark per bar) or one value against its band."""
    chart = chart_of(data)
    if chart.kind == "band":
        return _band(chart, width)
    values = list(chart.values) or [0.0]
    everything = [*values, *chart.expected, *chart.low, *chart.high, 0.0]
    lo, hi = min(everything), max(everything)
    if hi == lo:
        hi = lo + 1
    plot_w, plot_h = width - LEFT - RIGHT, height - TOP - BOTTOM

    def y(value: float) -> float:
        return TOP + (hi - value) / (hi - lo) * plot_h

    step = plot_w / len(values)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" class="chart" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}"><title>{escape(chart.title)}</title>',
        f'<text x="{LEFT}" y="14" font-size="12" font-weight="bold">{escape(chart.title)}</text>',
    ]
    for i, value in enumerate(values):
        x = LEFT + i * step
        if i < len(chart.low) and i < len(chart.high):
            top, bottom = y(chart.high[i]), y(chart.low[i])
            parts.append(
                f'<rect x="{x:.1f}" y="{top:.1f}" width="{step:.1f}" '
                f'height="{max(bottom - top, 0.5):.1f}" fill="{BAND}"/>'
            )
        top, bottom = sorted((y(value), y(0.0)))
        parts.append(
            f'<rect x="{x + step * 0.2:.1f}" y="{top:.1f}" width="{step * 0.6:.1f}" '
            f'height="{max(bottom - top, 0.5):.1f}" fill="{BAR}">'
            f"<title>{escape(chart.labels[i] if i < len(chart.labels) else '')}: "
            f"{escape(_label(value, chart.unit))}</title></rect>"
        )
        if i < len(chart.expected):
            ey = y(chart.expected[i])
            parts.append(
                f'<line x1="{x:.1f}" x2="{x + step:.1f}" y1="{ey:.1f}" y2="{ey:.1f}" '
                f'stroke="{MARK}" stroke-width="2"/>'
            )
        if i < len(chart.labels) and (len(values) <= 24 or i % (len(values) // 12 + 1) == 0):
            parts.append(
                f'<text x="{x + step / 2:.1f}" y="{height - BOTTOM + 14}" font-size="10" '
                f'text-anchor="middle">{escape(chart.labels[i])}</text>'
            )
    zero = y(0.0)
    parts.append(
        f'<line x1="{LEFT}" x2="{width - RIGHT}" y1="{zero:.1f}" y2="{zero:.1f}" stroke="{AXIS}"/>'
    )
    for value in (hi, lo):
        parts.append(
            f'<text x="{LEFT - 4}" y="{y(value) + 4:.1f}" font-size="10" text-anchor="end">'
            f"{escape(_label(value, chart.unit))}</text>"
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))  # every text in it is escaped above


def _band(chart: Chart, width: int) -> SafeString:
    """One observed value (a red square) against its expected value (a blue line) and band."""
    observed = chart.values[0] if chart.values else 0.0
    expected = chart.expected[0] if chart.expected else observed
    low = chart.low[0] if chart.low else expected
    high = chart.high[0] if chart.high else expected
    lo, hi = min(low, observed, expected), max(high, observed, expected)
    pad = (hi - lo) * 0.1 or 1.0
    lo, hi = lo - pad, hi + pad
    height = 70

    def x(value: float) -> float:
        return LEFT + (value - lo) / (hi - lo) * (width - LEFT - RIGHT)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" class="chart" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}"><title>{escape(chart.title)}</title>',
        f'<text x="{LEFT}" y="14" font-size="12" font-weight="bold">{escape(chart.title)}</text>',
        f'<rect x="{x(low):.1f}" y="24" width="{max(x(high) - x(low), 0.5):.1f}" height="20" '
        f'fill="{BAND}"/>',
        f'<line x1="{x(expected):.1f}" x2="{x(expected):.1f}" y1="20" y2="48" stroke="{MARK}" '
        f'stroke-width="2"/>',
        f'<rect x="{x(observed) - 5:.1f}" y="29" width="10" height="10" fill="#c0392b"/>',
    ]
    for value, anchor in ((low, "end"), (high, "start")):
        parts.append(
            f'<text x="{x(value):.1f}" y="62" font-size="10" text-anchor="{anchor}">'
            f"{escape(_label(value, chart.unit))}</text>"
        )
    parts.append(
        f'<text x="{x(observed):.1f}" y="22" font-size="10" text-anchor="middle">'
        f"{escape(_label(observed, chart.unit))}</text></svg>"
    )
    return mark_safe("".join(parts))  # every text in it is escaped above
