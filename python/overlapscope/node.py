"""Attribute access to a JSON document: `report.ranks[0].summary.overlap_ratio`.

Node wraps a dict (read-only mapping; keys also as attributes), NodeList a list; both wrap what
they hand out, and .to_dict() / .to_list() give the plain data back. Numbers, strings, booleans
and None come out as they are.
"""

import copy
from collections.abc import Mapping, Sequence


def wrap(value):
    if isinstance(value, dict):
        return Node(value)
    if isinstance(value, list):
        return NodeList(value)
    return value


class Node(Mapping):
    __slots__ = ("_d",)

    def __init__(self, d):
        object.__setattr__(self, "_d", d)

    def __getattr__(self, name):
        try:
            return wrap(self._d[name])
        except KeyError:
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
        return [k for k in self._d if k.isidentifier()] + ["to_dict"]

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
