"""The packaging-free fast path for plain versions agrees with ``packaging`` wherever it answers.

The ``plain_`` functions of ``sitewarden.facts.metadata`` answer only for plain
releases and simple requirements and return None for the rest; these properties hold them
to ``packaging``'s own answers on generated and arbitrary inputs.
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from sitewarden.facts import metadata

OPS = ["~=", "==", "!=", "<=", ">=", "<", ">", "===", "=", "=>", ""]

numbers = st.lists(st.integers(0, 12), min_size=1, max_size=4)
plain = st.builds(lambda parts, zero: ".".join(("0" if zero and i == 0 else "") + str(p)
                                               for i, p in enumerate(parts)),
                  numbers, st.booleans())
version_text = st.one_of(plain, plain.map(lambda v: v + "rc1"), plain.map(lambda v: v + ".*"),
                         plain.map(lambda v: v + "+local"), plain.map(lambda v: "1!" + v),
                         st.sampled_from(["", " 1.0 ", "v1.0", "1..0", "1.0.", "abc"]))
clause = st.builds(lambda op, sp1, v, sp2: op + sp1 + v + sp2, st.sampled_from(OPS),
                   st.sampled_from(["", " "]), version_text, st.sampled_from(["", " "]))
specifiers = st.lists(clause, max_size=3).map(",".join)
names = st.sampled_from(["six", "Six", "py-yaml", "zope.interface", "a_b", "x", "-bad", "bad-"])
extras = st.sampled_from(["", "[]", "[socks]", "[a, b]", "[a,]", "[-x]", "[a"])
markers = st.sampled_from([
    "", '; extra == "socks"', "; extra=='Socks'", '; (extra == "test")', '; "x" == extra',
    '; extra == "a b"', '; python_version >= "3"', '; extra == "a" or extra == "b"',
])
requirements = st.builds(
    lambda n, e, sp, paren, m: n + e + (" (%s)" % sp if paren and sp else " " + sp) + m,
    names, extras, specifiers, st.booleans(), markers)


def _packaging_contains(spec_text, version):
    return SpecifierSet(spec_text).contains(Version(version), prereleases=True)


@settings(max_examples=400, deadline=None)
@given(plain, plain)
def test_compare_agrees(a, b):
    va, vb = Version(a), Version(b)
    assert metadata.plain_compare(a, b) == (va > vb) - (va < vb)


@settings(max_examples=600, deadline=None)
@given(specifiers, plain)
@example(">=1.0,<2", "1.5")
@example("~=1.0", "2.0")
@example("~=2.0.0", "2.0")
@example("~=1.4.5", "1.4.10")
@example("==1.0", "1.0.0")
@example("!=1.0.0", "1")
@example(">=1,>=1", "1")
@example("~=0.0,==0,==00", "0")  # one clause for ==0 and ==00, the first written
def test_specifiers_agree_where_answered(spec_text, version):
    parsed = metadata.plain_specifiers(spec_text)
    if parsed is None:
        return
    expected = SpecifierSet(spec_text)  # what it accepts, packaging accepts
    assert metadata.plain_specifier_text(parsed) == str(expected)
    assert metadata.plain_contains(parsed, version) == _packaging_contains(spec_text, version)


@settings(max_examples=800, deadline=None)
@given(requirements, plain)
@example('six (>=1.16) ; extra == "test"', "1.17.0")
@example("pyparsing (!=3.0.1,<4)", "3.0.1")
def test_requirements_agree_where_answered(text, version):
    parsed = metadata.plain_requirement(text)
    if parsed is None:
        return
    req = Requirement(text)
    name, specs, extra = parsed
    assert name == req.name
    assert metadata.plain_specifier_text(specs) == str(req.specifier)
    if extra:
        assert req.marker is not None and not req.marker.evaluate({"extra": ""})
    else:
        assert req.marker is None
    assert metadata.plain_contains(specs, version) == req.specifier.contains(
        Version(version), prereleases=True)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_arbitrary_text_is_declined_or_agrees(text):
    parsed = metadata.plain_requirement(text)
    if parsed is not None:
        assert Requirement(text).name == parsed[0]
    number = metadata.plain_release(text)
    if number is not None:
        assert Version(text).release == number


def test_the_common_cases_take_the_fast_path():
    """Debian's and PyPI's everyday requirements are answered without packaging."""
    for text in ["six", "six>=1.5", "pyparsing (!=3.0.1,<4,>=2.4.2)", 'PySocks!=1.5.7,>=1.5.6 ; '
                 'extra == "socks"', "urllib3[socks] (<3,>=1.21.1)", "idna (>=2.5, <4)",
                 "zope.interface ~= 5.0", '(extra == "test")']:
        if text.startswith("("):
            assert metadata.plain_requirement("x ; " + text) is not None
        else:
            assert metadata.plain_requirement(text) is not None, text
    for text in ['six ; python_version < "3"', "six @ https://x/six.whl", "six==1.*",
                 "six>=1.0rc1", "six===1.0", "six~=1"]:
        assert metadata.plain_requirement(text) is None, text
