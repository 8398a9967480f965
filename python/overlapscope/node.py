"""Attribute access to a JSON document: `report.ranks[0].summary.overlap_ratio`.

Node wraps a dict (read-only mapping; keys also as attributes), NodeList a list; both wrap what
they hand out, and .to_dict() / .to_list() give the plain data back. Numbers, strings, booleans
and None come out as they are.

The report's keys are the field names of the engine's typed report (report::Report,
report/report.h). Where a key is a Python keyword the C++ name works too: `.cls` for "class"
(top_kernels[i]["class"]). A field wins over a mapping method of the same name:
`rank.findings.items` is the findings list; Mapping.items(node) or node.to_dict().items() are the
method's.
"""

import copy
import keyword
from collections.abc import Mapping, Sequence


def wrap(value):
    if isinstance(value, dict):
        return Node(value)
    if isinstance(value, list):
        return NodeList(value)
    return value


# Attribute names for keys that are Python keywords: report::Report's names for them.
_ALIASES = {"cls": "class"}


class Node(Mapping):
    __slots__ = ("_d",)

    def __init__(self, d):
        object.__setattr__(self, "_d", d)

    def __getattribute__(self, name):
        if not name.startswith("_"):
            d = object.__getattribute__(self, "_d")
            if name in d:  # a field, also where a Mapping method has its name ("items")
                return wrap(d[name])
        return object.__getattribute__(self, name)

    def __getattr__(self, name):
        try:
            return wrap(self._d[name])
        except KeyError:
            if name in _ALIASES and _ALIASES[name] in self._d:
                return wrap(self._d[_ALIASES[name]])
            raise AttributeError("no field %r here; fields: %s" % (name, ", ".join(self._d))) from None

    def __setattr__(self, name, value):
        raise AttributeError("report data is read-only")

    def __getitem__(self, key):
        return wrap(self._d[key])

    def __iter__(self):
        return iter(self._d)

    def __len__(self):
        return len(self._d)

    def __dir__(self):
        names = [k for k in self._d if k.isidentifier() and not keyword.iskeyword(k)]
        return names + [a for a, k in _ALIASES.items() if k in self._d] + ["to_dict"]

    def __repr__(self):
        return "Node(%r)" % (self._d,)

    def to_dict(self):
        """A copy of the data as plain dicts and lists."""
        return copy.deepcopy(self._d)


class NodeList(Sequence):
    __slots__ = ("_l",)

    def __init__(self, items):
        self._l = items

    def __getitem__(self, i):
        if isinstance(i, slice):
            return NodeList(self._l[i])
        return wrap(self._l[i])

    def __len__(self):
        return len(self._l)

    def __repr__(self):
        return "NodeList(%r)" % (self._l,)

    def to_list(self):
        """A copy of the data as plain lists and dicts."""
        return copy.deepcopy(self._l)
