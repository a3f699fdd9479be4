"""The topic tree's picture draws words of any script: fallback fonts where the default
font lacks a character, one warning (not one per character) where no font has it."""

import io
import warnings

import pytest
import scipy.sparse as sp

from semnmf import HierarchicalNMF
from semnmf.report import plot_tree
from semnmf.report.tree import MISSING_GLYPH, _charmap, text_fonts

from conftest import planted_corpus


@pytest.fixture(scope="module")
def tree():
    X, _ = planted_corpus()
    return HierarchicalNMF(3, random_state=0).fit(X), X.shape[1]


def _default_font_chars():
    from matplotlib import font_manager, rcParams

    return _charmap(font_manager.findfont(font_manager.FontProperties(
        family=rcParams["font.family"])))


def _saved(fig):
    """The warnings raised while saving ``fig`` as PNG and SVG."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.savefig(io.BytesIO(), format="png")
        fig.savefig(io.BytesIO(), format="svg")
    return [str(w.message) for w in caught]


def test_a_character_of_another_installed_font_is_drawn_with_it(tree):
    from matplotlib import font_manager

    default = _default_font_chars()
    # a character the default font lacks and another installed font has
    candidates = [(e.name, c) for e in font_manager.fontManager.ttflist
                  if not e.name.startswith("Last Resort")
                  for c in sorted(_charmap(e.fname) - default) if chr(c).isprintable()
                  and not chr(c).isspace()]
    if not candidates:
        pytest.skip("no installed font has a character the default font lacks")
    _, code = candidates[0]
    model, d = tree
    vocabulary = [f"w{j}" for j in range(d)]
    vocabulary = [f"{chr(code)}{w}" for w in vocabulary]  # every term carries it
    families, missing = text_fonts(vocabulary)
    assert not missing and len(families) > 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # neither our warning nor matplotlib's
        fig = plot_tree(model, vocabulary)
    assert _saved(fig) == []
    node_texts = fig.axes[0].texts
    assert all(chr(code) in t.get_text() for t in node_texts)
    assert all(t.get_fontfamily() == families for t in node_texts)


def test_characters_no_font_has_are_boxes_and_one_warning(tree):
    model, d = tree
    # unassigned code points: no font has a glyph for them
    absent = ["\u0378", "\u0379", "\u0380"]
    vocabulary = [f"{absent[j % 3]}term{j}" for j in range(d)]
    with pytest.warns(UserWarning, match=r"3 character\(s\) of the topic words .* are in no "
                                         r"installed font") as record:
        fig = plot_tree(model, vocabulary, title="corpus \u0378")
    assert len([w for w in record if "installed font" in str(w.message)]) == 1
    assert _saved(fig) == []  # no "Glyph ... missing from font(s)" per character
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert all(c not in text for c in absent for text in texts)
    assert any(MISSING_GLYPH in text for text in texts)
    assert MISSING_GLYPH in fig.axes[0].get_title()
    # the terms themselves are untouched: top_terms still gives them
    top = model.top_terms(2, vocabulary)
    assert any(c in str(term) for c in absent for terms in top for term, _ in terms)


def test_plain_words_keep_the_default_fonts(tree):
    from matplotlib import rcParams

    model, d = tree
    vocabulary = [f"word{j}" for j in range(d)]
    assert text_fonts(vocabulary) == (list(rcParams["font.family"]), frozenset())
    fig = plot_tree(model, vocabulary)
    assert _saved(fig) == []
    assert all(t.get_fontfamily() == list(rcParams["font.family"])
               for t in fig.axes[0].texts)


def test_a_wide_tree_picture_stays_under_3000_pixels():
    from semnmf import HierarchicalNMF
    from semnmf.report.tree import plot_tree

    blocks = [sp.random(12, 8, density=0.6, random_state=i, format="csr") for i in range(24)]
    X = sp.block_diag(blocks, format="csr") + sp.random(288, 192, density=0.01,
                                                         random_state=99)
    X = sp.csr_matrix(X)
    tree = HierarchicalNMF(n_components=23, random_state=0).fit(X)
    n_leaves = len(tree.leaves_)
    assert n_leaves >= 20
    vocabulary = [f"word{j}" for j in range(X.shape[1])]
    width, height = plot_tree(tree, vocabulary).get_size_inches() * 150
    assert width <= 3000 and height < 2000
