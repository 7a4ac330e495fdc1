"""The engine: designs asked of models, evaluations, profiles, conditions, the release gate and
one test × model's run — everything a run needs, and nothing of pytest (:mod:`pytest_competence.plugin`
translates between the two).

Its public modules: :mod:`.evaluate` (a design asked of a model), :mod:`.evaluation` (what the
answers reduce to), :mod:`.profile`, :mod:`.conditions`, :mod:`.analysis`, :mod:`.result`,
:mod:`.spec` (the competence marker, validated) and :mod:`.batch` (the OpenAI Batch path).
"""

__all__: list[str] = []
