"""Report's attribute access: every field of the --json document (report::Report's names) as
attributes and as items, read-only, with clear errors; gates' values are the summary's, typed as
the JSON report types them."""

import keyword

import pytest

import overlapscope
from overlapscope.node import Node, NodeList

TWO_RANKS = "samples/pytorch_ag_overlap"


def walk(node, plain, path):
    """Checks node (as handed out by the Report) against the plain document, everywhere."""
    if isinstance(plain, dict):
        assert isinstance(node, Node), path
        assert list(node) == list(plain) and len(node) == len(plain), path
        for k, v in plain.items():
            walk(node[k], v, path + "[%r]" % k)
            if k.isidentifier() and not keyword.iskeyword(k):
                walk(getattr(node, k), v, path + "." + k)
        assert node.to_dict() == plain, path
    elif isinstance(plain, list):
        assert isinstance(node, NodeList) and len(node) == len(plain), path
        for i, v in enumerate(plain):
            walk(node[i], v, path + "[%d]" % i)
        assert node.to_list() == plain and node[1:].to_list() == plain[1:], path
    else:
        assert node == plain and type(node) is type(plain), path


def test_every_field_is_an_attribute_and_an_item(in_root):
    r = overlapscope.analyze(TWO_RANKS)
    doc = r.to_dict()
    assert set(doc) >= {"schema", "inputs", "ranks", "top_kernels", "collectives_across_ranks"}
    for k, v in doc.items():
        walk(getattr(r, k), v, k)
        walk(r[k], v, k)
    assert r.ranks[1].summary.overlap_ratio == doc["ranks"][1]["summary"]["overlap_ratio"]
    assert set(dir(r)) >= set(doc) | {"to_dict", "require", "text"}


def test_class_is_also_cls_as_in_the_typed_report(in_root):
    r = overlapscope.analyze(TWO_RANKS)
    k = r.top_kernels[0]
    assert k.cls == k["class"] == r.to_dict()["top_kernels"][0]["class"]
    assert "cls" in dir(k) and "class" not in dir(k)
    with pytest.raises(AttributeError):
        r.ranks[0].cls  # only where the document has "class"


def test_fields_are_read_only_and_copies_are_independent(in_root):
    r = overlapscope.analyze(TWO_RANKS)
    s = r.ranks[0].summary
    with pytest.raises(AttributeError, match="read-only"):
        s.overlap_ratio = 1.0
    with pytest.raises(TypeError):
        s["overlap_ratio"] = 1.0
    d = s.to_dict()
    d["overlap_ratio"] = 2.0
    r.to_dict()["ranks"].clear()
    assert r.ranks[0].summary.overlap_ratio == r.to_dict()["ranks"][0]["summary"]["overlap_ratio"] != 2.0


def test_unknown_field_names_the_fields_there(in_root):
    r = overlapscope.analyze(TWO_RANKS)
    with pytest.raises(AttributeError, match="overlap_ratio"):
        r.ranks[0].summary.overlap_ration
    with pytest.raises(AttributeError, match="ranks"):
        r.rankz
    with pytest.raises(KeyError):
        r["rankz"]


def test_gate_values_are_typed_as_in_the_summary(in_root):
    r = overlapscope.analyze(TWO_RANKS)
    result = r.gates("exposed_comm_ns>=0", "overlap_ratio>=0")
    assert [c.metric for c in result.checks] == ["exposed_comm_ns", "overlap_ratio"] * len(r.ranks)
    for c in result.checks:
        summary = r.to_dict()["ranks"][[x.label for x in r.ranks].index(c.label)]["summary"]
        assert c.value == summary[c.metric] and type(c.value) is type(summary[c.metric])
    assert type(result.checks[0].value) is int and type(result.checks[1].value) is float


def test_repr_and_markdown(in_root):
    r = overlapscope.analyze(TWO_RANKS)
    assert all(x.label in repr(r) for x in r.ranks) and TWO_RANKS in repr(r)
    assert r._repr_markdown_() == r.markdown()
