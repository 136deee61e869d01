"""Pages whose one paragraph is hidden, and pages where it only looks hidden (issue 47, obs 3).

The rule of main text (crovia_spider/capture/hidden.py, docs/spider.md "Captures"): what the
markup hides from a reader is not main text. Each entry of HIDDEN wraps the paragraph in one
way of hiding it; each entry of SHOWN in markup that looks like hiding but that a browser shows
(a descendant undoing an inherited hiding, an override, a string that only spells a rule). A
capture of one of these pages must leave PARAGRAPH out for HIDDEN and keep it for SHOWN: the
text capture holds this in tests/capture/test_capture_hidden.py and test_hidden_text.py, and a
browser capture reading rendered text must agree on the same pages (where a browser's innerText
alone would still hold the paragraph: `aria-hidden`, `<textarea>`, off-screen, clipped and
zero-size boxes, `opacity: 0`, it must apply the same rule).
"""

from __future__ import annotations

from html import escape

TITLE = "Our commitments"
PARAGRAPHS = [
    "We publish every model card on the day a model is released, with the evaluations we ran"
    " and the data sources we used, and we keep each earlier card online beside the new one.",
    "Researchers can apply for access to the weights of our research models through the form"
    " on this page; we answer every application within thirty days and explain any refusal.",
]
PARAGRAPH = (
    "We will never train on the content of customer conversations, and we delete them from our"
    " systems after thirty days unless a customer asks us in writing to keep them for longer."
)

# name -> markup holding PARAGRAPH ("{p}") hidden from every reader, or from some readers.
HIDDEN: dict[str, str] = {
    "hidden-attribute": "<p hidden>{p}</p>",
    "hidden-until-found": '<p hidden="until-found">{p}</p>',
    "display-none": '<p style="display:none">{p}</p>',
    "display-none-spelt-otherwise": '<p style="color: red; /* x */ DISPLAY : None">{p}</p>',
    "display-none-escaped": '<p style="displ\\61y: n\\6fne">{p}</p>',
    "display-none-important": '<p style="display: none !important; display: block">{p}</p>',
    "display-none-ancestor": '<div style="display: none"><section><p>{p}</p></section></div>',
    "visibility-hidden": '<p style="visibility: hidden">{p}</p>',
    "visibility-collapse": '<div style="visibility: collapse"><p>{p}</p></div>',
    "content-visibility": '<p style="content-visibility: hidden">{p}</p>',
    "template": "<template><p>{p}</p></template>",
    "noscript": "<noscript><p>{p}</p></noscript>",
    "textarea": "<textarea>{p}</textarea>",
    "aria-hidden": '<p aria-hidden="true">{p}</p>',
    "aria-hidden-ancestor": '<div aria-hidden=" TRUE "><p>{p}</p></div>',
    "dialog-closed": "<dialog><p>{p}</p></dialog>",
    "off-screen-left": '<div style="position: absolute; left: -9999px"><p>{p}</p></div>',
    "off-screen-top": '<p style="position: fixed; top: -100vh">{p}</p>',
    "off-screen-margin": '<p style="margin-left: -200em">{p}</p>',
    "off-screen-text-indent": '<p style="text-indent: -10000px">{p}</p>',
    "opacity-zero": '<p style="opacity: 0">{p}</p>',
    "font-size-zero": '<p style="font-size: 0">{p}</p>',
    "zero-size": '<div style="height: 0; overflow: hidden"><p>{p}</p></div>',
    "clipped": (
        '<p style="position: absolute; width: 1px; height: 1px; overflow: hidden;'
        ' clip: rect(0, 0, 0, 0)">{p}</p>'
    ),
    "clip-path": '<p style="clip-path: inset(50%)">{p}</p>',
}

# name -> markup holding PARAGRAPH that a reader is shown.
SHOWN: dict[str, str] = {
    "plain": "<p>{p}</p>",
    "hidden-overridden": '<p hidden style="display: block">{p}</p>',
    "visibility-undone": (
        '<div style="visibility: hidden"><p style="visibility: visible">{p}</p></div>'
    ),
    "font-size-undone": '<div style="font-size: 0"><p style="font-size: 16px">{p}</p></div>',
    "aria-hidden-false": '<p aria-hidden="false">{p}</p>',
    "important-first": '<p style="display: block !important; display: none">{p}</p>',
    "rule-in-a-string": "<p style=\"font-family: 'a; display: none'\">{p}</p>",
    "rule-in-a-comment": '<p style="/* display: none */ color: #333">{p}</p>',
    "overflow-hidden": '<div style="overflow: hidden"><p>{p}</p></div>',
    "aspect-ratio-box": (
        '<div style="height: 0; padding-bottom: 56%; overflow: hidden"><p>{p}</p></div>'
    ),
    "small-offset": '<p style="position: relative; left: -10px">{p}</p>',
}


def page(markup: str = "{p}", paragraph: str = PARAGRAPH, footer: str = "") -> bytes:
    """An article of PARAGRAPHS, then `markup` holding `paragraph`, then a footer."""
    text = "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    shown = markup.format(p=escape(paragraph))
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{TITLE}</title></head><body>"
        f"<nav><a href='/'>Home</a></nav><article><h1>{TITLE}</h1>{text}{shown}</article>"
        f"<footer>{footer}</footer></body></html>"
    ).encode()
