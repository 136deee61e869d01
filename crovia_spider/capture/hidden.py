"""What no reader of a page is shown: removed before its main text is read (docs/spider.md).

A vendor who hides a paragraph instead of deleting it changes what readers get as surely as an
edit; if the hidden paragraph stayed in the main text, the capture would be signed `unchanged`
and `crovia diff` would answer "no change". So, on the parsed page and before trafilatura reads
it, `drop_hidden` removes every element the markup itself hides, with all it holds:

- `<template>`, `<noscript>` (a browser runs scripts), `<textarea>`, `<script>`, `<style>`, and a
  `<dialog>` without `open`: never rendered as text of the page;
- an element with the `hidden` attribute (whatever its value), unless its inline style sets
  `display` to something other than `none` (a browser then shows it);
- an element with `aria-hidden="true"`: withdrawn from assistive technology, so not given to
  every reader;
- an element whose inline style (its `style` attribute, read as CSS: comments, escapes, the last
  declaration of a property wins and `!important` beats a later plain one) says
  `display: none`, `content-visibility: hidden`, `opacity: 0` (or below), a zero `width` or
  `height` (or `max-`) with `overflow` hidden or clip and no padding, a zero-area
  `clip: rect(...)` or a `clip-path: inset()` of 50% or more, or puts it off-screen: `left` or
  `top` at -1000px or less with `position` absolute, fixed or relative, or `margin-left`,
  `margin-top` or `text-indent` at -1000px or less (lengths in px, pt, pc, in, cm, mm, q; em,
  rem at 16px, ch, ex at 8px; %, vw, vh, vmin, vmax at -100 or less).

`visibility: hidden` (or `collapse`) and `font-size: 0` are inherited, and a descendant may undo
them (`visibility: visible`; a font size that is not relative to its parent's, as em and % of
zero are zero), as in a browser: the element's own text goes, a descendant shown again stays.

Only the markup is read: stylesheets (a `<style>` element, a linked CSS file), scripts, colours
and images are not evaluated, so a paragraph hidden by a class name is still main text here; a
browser capture, reading rendered text, must agree with this module on tests/capture/
hidden_pages.py and may see more. The cost is one walk of the tree and one CSS parse of each
`style` attribute: linear in the page, under the parser worker's ceilings like the rest of the
text's extraction.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import tinycss2
from lxml import etree

# Elements whose content a browser never renders as the page's text.
NEVER_SHOWN = frozenset(("template", "noscript", "textarea", "script", "style"))
# How far left or up (in px, or in units of 100 for %, vw, vh, vmin, vmax) is off-screen.
OFF_SCREEN_PX = -1000.0
OFF_SCREEN_PERCENT = -100.0
_PX = {"px": 1.0, "pt": 4 / 3, "pc": 16.0, "in": 96.0, "cm": 96 / 2.54, "mm": 96 / 25.4}
_PX |= {"q": 96 / 101.6, "em": 16.0, "rem": 16.0, "ch": 8.0, "ex": 8.0}
_RELATIVE = frozenset(("vw", "vh", "vmin", "vmax"))
_OFFSETS = ("left", "top")
_MARGINS = ("margin-left", "margin-top", "text-indent")
_SIZES = ("width", "height", "max-width", "max-height")
_OVERFLOWS = ("overflow", "overflow-x", "overflow-y")
# The keywords of a `display` that shows the element (CSS Display 3).
_DISPLAYS = frozenset(
    (
        "block", "inline", "run-in", "flow", "flow-root", "table", "flex", "grid", "ruby",
        "list-item", "contents", "inline-block", "inline-table", "inline-flex", "inline-grid",
        "table-row-group", "table-header-group", "table-footer-group", "table-row",
        "table-cell", "table-column-group", "table-column", "table-caption", "ruby-base",
        "ruby-text", "ruby-base-container", "ruby-text-container",
    )
)  # fmt: skip
# Font sizes that do not scale the parent's (`initial` is `medium`).
_FONT_KEYWORDS = frozenset(
    ("xx-small", "x-small", "small", "medium", "large", "x-large", "xx-large", "xxx-large")
) | {"initial"}


def drop_hidden(root: Any) -> bool:
    """Remove from the lxml HTML tree `root`, in place, every element this module's docstring
    says is hidden, and the text of elements whose visibility is hidden; and take the `style`
    attribute off every element kept, since what it hides is decided here (trafilatura would
    otherwise drop any element whose style holds the word "hidden", `overflow: hidden` too,
    though a reader sees it). Returns False when the root itself is hidden (the page shows
    nothing), True otherwise. Never raises on markup."""
    gone: list[Any] = []
    # Per open element, its (inherited) `visibility` hidden and font size zero: either hides
    # the element's own text, and a descendant may undo either.
    states = [(False, False)]
    walker = etree.iterwalk(root, events=("start", "end"))
    for event, element in walker:
        if event == "end":
            if len(states) > 1 and any(states[-2]):
                element.tail = None  # text after it belongs to its parent, whose text is hidden
            states.pop()
            continue
        raw = element.get("style") if isinstance(element.tag, str) else None
        style = declarations(raw)
        if is_hidden(element, style):
            gone.append(element)
            walker.skip_subtree()
            states.append(states[-1])  # for the end event still to come
            continue
        if raw is not None:
            del element.attrib["style"]  # what it hides is decided here (see the docstring)
        state = (_visibility_hidden(style, states[-1][0]), _font_zero(style, states[-1][1]))
        states.append(state)
        if any(state):
            element.text = None
    if gone and gone[0] is root:
        return False
    for element in gone:
        element.drop_tree()  # keeps its tail, which is its parent's text
    return True


def is_hidden(element: Any, style: dict[str, list[Any]]) -> bool:
    """Whether `element` (with its inline `style`, as `declarations` reads it) hides itself and
    everything in it."""
    tag = element.tag
    if not isinstance(tag, str):
        return False  # a comment or processing instruction holds no text of the page
    tag = tag.lower()
    if tag in NEVER_SHOWN or (tag == "dialog" and element.get("open") is None):
        return True
    if (element.get("aria-hidden") or "").strip().lower() == "true":
        return True
    display = style.get("display")
    if _ident(display) == "none":
        return True
    if element.get("hidden") is not None and not _shown_display(display):
        return True
    return _style_hides(style)


def declarations(text: str | None) -> dict[str, list[Any]]:
    """An inline style's winning declarations: property name (lower case) to its value's
    tokens, the last declaration of a name winning unless an earlier one is `!important`."""
    if not text:
        return {}
    won: dict[str, tuple[bool, list[Any]]] = {}
    for rule in tinycss2.parse_blocks_contents(text, skip_comments=True, skip_whitespace=True):
        if rule.type != "declaration":
            continue
        held = won.get(rule.lower_name)
        if held is None or rule.important or not held[0]:
            won[rule.lower_name] = (rule.important, _tokens(rule.value))
    return {name: value for name, (_important, value) in won.items()}


def _tokens(value: Iterable[Any]) -> list[Any]:
    return [token for token in value if token.type not in ("whitespace", "comment")]


def _ident(value: list[Any] | None) -> str:
    """The keyword a one-keyword value is (lower case), else ""."""
    if value and len(value) == 1 and value[0].type == "ident":
        return value[0].lower_value
    return ""


def _shown_display(value: list[Any] | None) -> bool:
    """A `display` a browser reads, other than `none` (it overrides a `hidden` attribute)."""
    return bool(value) and all(
        token.type == "ident" and token.lower_value in _DISPLAYS for token in value
    )


def _visibility_hidden(style: dict[str, list[Any]], inherited: bool) -> bool:
    keyword = _ident(style.get("visibility"))
    if keyword in ("hidden", "collapse"):
        return True
    if keyword == "visible":
        return False
    return inherited


def _font_zero(style: dict[str, list[Any]], inherited: bool) -> bool:
    """Whether the element's font size is zero: set so, or inherited and not set again to a
    size that does not scale the parent's (em, ex, ch and % of zero are zero)."""
    value = style.get("font-size")
    if not value or len(value) != 1:
        return inherited
    token = value[0]
    if _zero(value):
        return True
    if token.type == "dimension" and token.lower_unit in ("em", "ex", "ch"):
        return inherited
    if token.type == "ident" and token.lower_value in _FONT_KEYWORDS:
        return False
    if token.type == "dimension" and (token.lower_unit in _PX or token.lower_unit in _RELATIVE):
        return False
    return inherited  # relative to the parent's, or no size a browser reads: the parent's


def _style_hides(style: dict[str, list[Any]]) -> bool:
    if not style:
        return False
    if _ident(style.get("content-visibility")) == "hidden":
        return True
    opacity = _number(style.get("opacity"))
    if opacity is not None and opacity <= 0:
        return True
    if _collapsed(style) or _clipped(style):
        return True
    positioned = _ident(style.get("position")) in ("absolute", "fixed", "relative")
    if positioned and any(_off_screen(style.get(name)) for name in _OFFSETS):
        return True
    return any(_off_screen(style.get(name)) for name in _MARGINS)


def _number(value: list[Any] | None) -> float | None:
    """A value that is one number or percentage, as a fraction for a percentage."""
    if not value or len(value) != 1:
        return None
    token = value[0]
    if token.type == "number":
        return float(token.value)
    if token.type == "percentage":
        return float(token.value) / 100
    return None


def _zero(value: list[Any] | None) -> bool:
    """A value that is one length (or number, or percentage) of zero."""
    if not value or len(value) != 1:
        return False
    token = value[0]
    return token.type in ("number", "percentage", "dimension") and token.value == 0


def _px(token: Any) -> float | None:
    """A length token in px (a bare 0 too), or None when it is none or relative."""
    if token.type == "number" and token.value == 0:
        return 0.0
    if token.type == "dimension" and token.lower_unit in _PX:
        return float(token.value) * _PX[token.lower_unit]
    return None


def _off_screen(value: list[Any] | None) -> bool:
    """A value that is one length at OFF_SCREEN_PX or less (OFF_SCREEN_PERCENT or less for a
    length relative to the viewport or the containing block)."""
    if not value or len(value) != 1:
        return False
    token = value[0]
    if token.type == "percentage" or (token.type == "dimension" and token.lower_unit in _RELATIVE):
        return token.value <= OFF_SCREEN_PERCENT
    length = _px(token)
    return length is not None and length <= OFF_SCREEN_PX


def _collapsed(style: dict[str, list[Any]]) -> bool:
    """A box of zero width or height whose overflow is hidden, and that no padding opens
    again (a zero height with a bottom padding is how a video keeps its aspect ratio)."""
    if not any(_zero(style.get(name)) for name in _SIZES):
        return False
    if not any(_ident(style.get(name)) in ("hidden", "clip") for name in _OVERFLOWS):
        return False
    return all(_zero(value) for name, value in style.items() if name.startswith("padding"))


def _clipped(style: dict[str, list[Any]]) -> bool:
    """`clip: rect(...)` of zero width or height (in px), or `clip-path: inset(P)` with P at
    least 50% (either alone: a box clipped to nothing shows nothing)."""
    clip = style.get("clip")
    if clip and len(clip) == 1 and clip[0].type == "function" and clip[0].lower_name == "rect":
        edges = [_px(t) for t in _tokens(clip[0].arguments) if t.type != "literal"]  # commas
        if len(edges) == 4 and None not in edges:
            top, right, bottom, left = edges
            if right <= left or bottom <= top:
                return True
    path = style.get("clip-path")
    if path and len(path) == 1 and path[0].type == "function" and path[0].lower_name == "inset":
        first = _tokens(path[0].arguments)[:1]
        if first and first[0].type == "percentage" and first[0].value >= 50:
            return True
    return False
