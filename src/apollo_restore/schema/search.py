"""The search settings a caller gives (:class:`RestoreConfig`, from the CLI's options or the
Python API), each bounded as a model folder's ``search`` entry is: the one object every restorer
searches with.

    RestoreConfig(k=20, beam_width=40)
    RestoreConfig(k=0)                          # RequestError: [E310] RestoreConfig.k must be ...
    config.replace(hint_slack=5)                # a checked copy
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, ValidationError

from apollo_restore.errors import RequestError
from apollo_restore.schema.base import Problem, Settings, problem_of, whole
from apollo_restore.schema.folder import MAX_BEAM_WIDTH, MAX_HINT_SLACK, PRECISION

#: Most readings a gap's list holds (the request limit's ``max_k``).
MAX_READINGS = 200
#: Longest middle searched without a hint (characters): twice the longest gap a request may state.
MAX_MIDDLE_CHARS = 400


class RestoreConfig(Settings):
    """The search settings, shared by every restorer (each member's own config holds only what is
    its own: beam sizes, smoothing); every one within its bounds, checked on construction (a beam
    of a billion rows or a slack of a million letters is refused before any search).

    Attributes:
        k: candidates per gap (the default of every restorer's ``candidates``): it only cuts the
            ranked pool.
        pool: readings each restorer proposes to a gap's ranked pool, whatever ``k``: the neural
            beam width, and the count each ensemble member adds to the union. Fixed, so that the
            ranking and its probabilities never depend on ``k`` (a larger ``k`` than the pool
            holds gives the whole pool).
        context_chars: characters of prefix and of suffix given to the model, each side
            (the model was trained on windows of about 500 characters in all).
        max_chars: longest middle the neural model searches when there is no hint (characters,
            spaces included).
        max_letters: longest reading the classical and document members search or propose
            when there is no hint (letters).
        exact_length: force candidates to the hinted letter count (only for exact hints);
            for comparisons with systems that need the gap length.
        hint_slack: letters beyond the hint still searched, so a wrong hint is survived.
        beam_width: free rows (middles still being written) the neural beam keeps per step
            (``None``: ``pool``); it still finishes up to ``pool`` readings.
        precision: the neural model's matrix products on a CPU, ``"fp32"`` or ``"int8"`` (int8
            weights with a scale per output row, activations quantised per token:
            :class:`~apollo_restore.model.lean.Int8Weight`); ``None``: the model folder's
            setting, else ``"fp32"``. A GPU always runs the weights as loaded.

    Raises:
        RequestError: ``E310`` on construction, naming the setting, what it must be and what it is.
    """

    k: whole(1, MAX_READINGS, "readings listed per gap") = 20
    pool: whole(1, MAX_READINGS, "readings each member proposes") = 20
    context_chars: whole(1, 100_000, "characters of context each side") = 250
    max_chars: whole(1, MAX_MIDDLE_CHARS, "longest middle without a hint, characters") = 40
    max_letters: whole(1, MAX_MIDDLE_CHARS, "longest reading without a hint, letters") = 25
    exact_length: bool = Field(False, description="true or false")
    hint_slack: whole(0, MAX_HINT_SLACK, "letters searched beyond a hint") = 2
    beam_width: whole(1, MAX_BEAM_WIDTH, "rows the neural beam keeps per step") | None = None
    precision: PRECISION | None = Field(None, description='"fp32", "int8" or null (the folder\'s)')

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as err:
            p = problem_of(err, type(self))
            if p.unknown is not None:  # a setting it does not take
                p = Problem(p.unknown, values[p.unknown], f"one of its settings ({p.known})")
            raise RequestError("E310", name=f"RestoreConfig.{p.field}", expected=p.expected, value=p.value) from None


__all__ = ["MAX_MIDDLE_CHARS", "MAX_READINGS", "RestoreConfig"]
