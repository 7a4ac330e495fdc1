"""Ordering over the whole 31-relation vocabulary catalog (CBE paper, arXiv:2610.22894, App. B.1, §5.2).

Every vocabulary renders the same latent instances; a parameter named like a family option
(here ``vocabulary``) overrides the marker, so the catalog is one parametrized test.
"""

import pytest

from pytest_competence.strategies import CATALOG


@pytest.mark.parametrize("vocabulary", [v.name for v in CATALOG])
@pytest.mark.competence(levels=[4, 16, 64], pairs=40)
def test_catalog(competence, vocabulary):
    """C_0 = C_1 = 1 in every vocabulary, nonce relations included."""
    assert competence.evaluation.items[0].params["vocabulary"] == vocabulary
