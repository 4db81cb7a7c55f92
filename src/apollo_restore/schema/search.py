"""The search settings a caller gives (:class:`~apollo_restore.restoration.config.RestoreConfig`,
from the CLI's options or the Python API): each bounded, as a model folder's ``search`` entry is.

    check(SearchSettings, {"k": 20, "beam_width": 40})   # SchemaError beyond a bound
"""

from pydantic import Field

from apollo_restore.schema.base import Settings, whole
from apollo_restore.schema.folder import MAX_BEAM_WIDTH, MAX_HINT_SLACK, PRECISION

#: Most readings a gap's list holds (the request limit's ``max_k``).
MAX_READINGS = 200
#: Longest middle searched without a hint (characters): twice the longest gap a request may state.
MAX_MIDDLE_CHARS = 400


class SearchSettings(Settings):
    """What ``RestoreConfig`` holds (see its attributes for what each means)."""

    k: whole(1, MAX_READINGS, "readings listed per gap")
    pool: whole(1, MAX_READINGS, "readings each member proposes")
    context_chars: whole(1, 100_000, "characters of context each side")
    max_chars: whole(1, MAX_MIDDLE_CHARS, "longest middle without a hint, characters")
    max_letters: whole(1, MAX_MIDDLE_CHARS, "longest reading without a hint, letters")
    exact_length: bool = Field(description="true or false")
    hint_slack: whole(0, MAX_HINT_SLACK, "letters searched beyond a hint")
    beam_width: whole(1, MAX_BEAM_WIDTH, "rows the neural beam keeps per step") | None
    precision: PRECISION | None = Field(description='"fp32", "int8" or null (the folder\'s)')
