"""CSS selectors of parsel's dialect, evaluated at a cost the page bounds (issue 47).

parsel reads `div.post a` as the XPath `descendant-or-self::div[…]/descendant::a`, and libxml2
evaluates it context by context: it walks the subtree of every `div.post` and merges each walk's
nodes into the result, comparing every node with every one already there. Nested matches make
that cost the depth times the square of the matches: a 982 KB page of 2,000 nested `div.post`
around 35,000 links takes about 11 minutes of CPU in one C call, which no timer inside the
process can interrupt (read here in 1.0 s).

A `Query` gives the same nodes in the same order (tests/spider/test_bounded_css.py checks it
against parsel on generated pages and selectors), evaluated another way:

- each compound selector (the part between two combinators, `div.post`, `a:not(.ad)`) is one
  XPath `descendant-or-self::…` from the scope, which libxml2 evaluates from that single node, in
  one pass over the scope's elements, with no merge;
- the combinators (descendant, child, `+`, `~`) are then resolved in one walk of the scope, in
  document order: an element belongs to step i of a selector when it matches compound i and an
  open ancestor (descendant), its parent (child), its previous element sibling (`+`) or an earlier
  one (`~`) belongs to step i - 1. Every element is visited once, whatever the nesting;
- the pseudo-elements `::text` and `::attr(name)` are read in the same walk (text nodes as
  `.text` and `.tail`, attributes in their order), so they come out in document order too.

So a query costs one XPath pass over the scope per compound plus one walk of the scope, for the
compounds made of type, class, id and attribute tests, `:not()`, `:is()` and the combinators.
Pseudo-classes that count siblings or read the text or descendants of each element they test
(`:nth-child()` and its kin, `:first-child`, `:last-child`, `:only-child`, the `-of-type` ones,
`:empty`, `:contains()`, `:has()`) cost more than one visit per element, up to the square of the
page: they are evaluated as parsel does, bounded only by the parser worker's deadline
(crovia_spider/feed/ceilings.py). So is a selector relative to an item that leaves it through its
first combinator (`h2 + p` from an `h2` item: the item's following siblings), which `first`
evaluates as parsel does.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from cssselect import parse
from cssselect.parser import CombinedSelector, FunctionalPseudoElement
from lxml import etree
from parsel.csstranslator import HTMLTranslator

_TRANSLATOR = HTMLTranslator()  # parsel's: `::text` and `::attr(name)`, as Selector.css reads them
_NAMESPACES = {"re": "http://exslt.org/regular-expressions"}  # parsel's default
_SIBLINGS = ("+", "~")
_EVENTS = ("start", "end", "comment", "pi")
Match = Any  # an element, or the text of a text node or an attribute


@dataclass(frozen=True)
class _Chain:
    """One selector of a group: its compounds, the combinators between them, its pseudo-element
    (None, "text", or the attribute name of `::attr(name)`), and whether its last compound is a
    bare `*` after a descendant combinator with a pseudo-element, which parsel translates as
    `descendant-or-self::*`: then the elements of the step before count too."""

    compounds: tuple[etree.XPath, ...]
    is_first: etree.XPath  # whether the context node itself matches the first compound
    combinators: tuple[str, ...]
    text: bool
    attribute: str | None
    with_contexts: bool


class Query:
    """One selector (a comma-separated group) of parsel's CSS dialect. Raises what parsel's
    translation raises for a selector it cannot read (cssselect's SelectorError and its kin)."""

    def __init__(self, css: str) -> None:
        self.css = css
        self.xpath = etree.XPath(
            _TRANSLATOR.css_to_xpath(css), namespaces=_NAMESPACES, smart_strings=False
        )
        self._chains = tuple(_chain(selector) for selector in parse(css))
        self._simple = len(self._chains) == 1 and len(self._chains[0].compounds) == 1

    def all(self, scope: Any) -> list[Match]:
        """Every match in `scope` (an element: the selector is relative to it, as parsel's
        `scope.css(css)`), in document order."""
        return [match for match, _ in self.walk(scope)]

    def walk(self, scope: Any) -> Iterator[tuple[Match, int]]:
        """Each match in `scope` in document order, with the number of element matches that
        enclose it (0 for one inside no other)."""
        return _Walk(self._chains, scope).matches()

    def first(self, scope: Any) -> Match | None:
        """The first match in `scope` in document order (None: nothing matches)."""
        if self._simple or self._leaves(scope):
            matches = self.xpath(scope)
            return matches[0] if matches else None
        return next((match for match, _ in self.walk(scope)), None)

    def _leaves(self, scope: Any) -> bool:
        """Whether a chain can leave `scope` to its siblings: its first combinator is `+` or `~`
        and `scope` itself matches its first compound."""
        return any(
            chain.combinators and chain.combinators[0] in _SIBLINGS and chain.is_first(scope)
            for chain in self._chains
        )


def _chain(selector: Any) -> _Chain:
    tree, steps = selector.parsed_tree, []
    while isinstance(tree, CombinedSelector):
        steps.append((tree.combinator, tree.subselector))
        tree = tree.selector
    steps.reverse()
    parts = [_TRANSLATOR.xpath(tree), *(_TRANSLATOR.xpath(sub) for _, sub in steps)]
    combinators = tuple(combinator for combinator, _ in steps)
    pseudo = selector.pseudo_element
    attribute = None
    if isinstance(pseudo, FunctionalPseudoElement):  # ::attr(name), checked by the translation
        attribute = pseudo.arguments[0].value
    last = parts[-1]
    bare = last.element == "*" and not last.condition and not last.path
    return _Chain(
        compounds=tuple(
            etree.XPath(f"descendant-or-self::{part}", namespaces=_NAMESPACES) for part in parts
        ),
        is_first=etree.XPath(f"boolean(self::{parts[0]})", namespaces=_NAMESPACES),
        combinators=combinators,
        text=pseudo == "text",
        attribute=attribute,
        with_contexts=bool(pseudo) and bare and combinators[-1:] == (" ",),
    )


class _Frame:
    """An open element of the walk: its steps, and those of its element children so far."""

    __slots__ = ("children", "encloses", "last_child", "steps", "text")

    def __init__(self, steps: int, text: bool, encloses: bool) -> None:
        self.steps = steps  # bit per (chain, step) this element belongs to
        self.last_child = 0  # steps of its last element child so far (for `+`)
        self.children = 0  # steps of any of its element children so far (for `~`)
        self.text = text  # its text nodes are matches
        self.encloses = encloses  # it is an element match


class _Walk:
    """One walk of a scope for a group of chains (the module docstring)."""

    def __init__(self, chains: tuple[_Chain, ...], scope: Any) -> None:
        self.scope = scope
        # One bit per (chain, step); each step's compound matched once over the scope.
        self.sets: list[set[Any]] = []
        self.tests: list[tuple[int, str, int]] = []  # (bit, combinator, bit of the step before)
        self.finals: list[tuple[int, _Chain]] = []  # (bits of a chain's selected elements, chain)
        for chain in chains:
            first = len(self.sets)
            for step, compound in enumerate(chain.compounds):
                self.sets.append(set(compound(scope)))
                previous = chain.combinators[step - 1] if step else ""
                self.tests.append((first + step, previous, first + step - 1))
            last = 1 << (first + len(chain.compounds) - 1)
            if chain.with_contexts:
                last |= last >> 1
            self.finals.append((last, chain))
        self.open = [0] * len(self.sets)  # open elements (ancestors) belonging to each step

    def matches(self) -> Iterator[tuple[Match, int]]:
        stack: list[_Frame] = []
        enclosing = 0  # open element matches
        for event, node in etree.iterwalk(self.scope, events=_EVENTS):
            parent = stack[-1] if stack else None
            if event == "start":
                steps = self._steps(node, parent)
                elements, text, names = self._selected(steps)
                frame = _Frame(steps, text, elements)
                stack.append(frame)
                for bit in range(len(self.open)):
                    if steps >> bit & 1:
                        self.open[bit] += 1
                if elements:
                    yield node, enclosing
                    enclosing += 1
                if names:
                    for name, value in node.attrib.items():
                        if name in names:
                            yield value, enclosing
                if text and node.text is not None:
                    yield node.text, enclosing
                continue
            if event == "end":
                frame = stack.pop()
                for bit in range(len(self.open)):
                    if frame.steps >> bit & 1:
                        self.open[bit] -= 1
                if frame.encloses:
                    enclosing -= 1
                parent = stack[-1] if stack else None
                if parent is not None:
                    parent.last_child = frame.steps
                    parent.children |= frame.steps
            # The end of an element, a comment or a processing instruction: its tail is a text
            # node of its parent (outside the scope for the scope itself).
            if parent is not None and parent.text and node.tail is not None:
                yield node.tail, enclosing

    def _steps(self, node: Any, parent: _Frame | None) -> int:
        steps = 0
        for bit, combinator, before in self.tests:
            if node not in self.sets[bit]:
                continue
            if (
                not combinator
                or (combinator == " " and self.open[before])
                or (
                    parent is not None
                    and (
                        (combinator == ">" and parent.steps >> before & 1)
                        or (combinator == "+" and parent.last_child >> before & 1)
                        or (combinator == "~" and parent.children >> before & 1)
                    )
                )
            ):
                steps |= 1 << bit
        return steps

    def _selected(self, steps: int) -> tuple[bool, bool, set[str]]:
        """What of an element in `steps` is a match: itself, its text nodes, which attributes."""
        elements, text, names = False, False, set()
        for bits, chain in self.finals:
            if not steps & bits:
                continue
            if chain.text:
                text = True
            elif chain.attribute is not None:
                names.add(chain.attribute)
            else:
                elements = True
        return elements, text, names
