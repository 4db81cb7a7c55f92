"""vLLM backend: prompt building and result conversion, driven by a fake LLM (no GPU here)."""

from __future__ import annotations

import importlib.util
from types import SimpleNamespace

import pytest

from apollo_restore.data.readers.leiden import parse_leiden
from apollo_restore.fim.layout import SPM_V1
from apollo_restore.fim.tokenizer import CharTokenizer, to_hf_tokenizer
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restoration.driver import restore_text
from apollo_restore.restoration.members.neural import NeuralMember
from apollo_restore.restoration.restorer import Restorer, candidates_many
from apollo_restore.scale import vllm_backend
from apollo_restore.scale.vllm_backend import VllmRestorer, VllmUnavailable, beams_to_readings
from apollo_restore.schema.restoration import Candidate, GapResult, Restoration

CHAR = CharTokenizer()


class FakeLLM:
    """Stands in for ``vllm.LLM``: records its calls, answers with fixed beams per prompt."""

    def __init__(self, readings: list[tuple[str, float, bool]]):
        self.readings, self.calls = readings, []

    def beam_search(self, prompts, params):
        self.calls.append((prompts, params))
        outputs = []
        for prompt in prompts:
            ids = prompt["prompt_token_ids"]
            seqs = [
                SimpleNamespace(
                    tokens=ids + CHAR.encode(text) + ([CHAR.eos_id] if done else []),
                    cum_logprob=score,
                    text=None,
                    finish_reason="stop" if done else "length",
                )
                for text, score, done in self.readings
            ]
            outputs.append(SimpleNamespace(sequences=seqs))
        return outputs


READINGS = [
    ("ηρα", -1.0, True),
    ("ηρ α", -1.5, True),  # same letters as "ηρα": merged into it
    ("ηραικ", -3.0, False),  # cut by max_tokens: kept only while fewer than k beams finished
    ("[7]", -0.1, True),  # not restorable text: dropped
    ("", -0.2, True),  # a lacuna holds at least one letter: dropped
    ("ερμ", -2.0, True),
]


def _restorer(readings=READINGS) -> VllmRestorer:
    return VllmRestorer("fake-model", llm=FakeLLM(readings), tokenizer=to_hf_tokenizer(CharTokenizer()))


def test_vllm_backend_imports_without_vllm_and_says_what_to_install(monkeypatch):
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "vllm" else real_find_spec(name, *a)
    )
    with pytest.raises(VllmUnavailable) as err:
        VllmRestorer("some/model")
    assert str(err.value) == f"vllm is not installed: {vllm_backend.INSTALL_HINT}"
    assert "pip install 'apollo-restore[vllm]'" in str(err.value) and "GPU" in str(err.value)


def test_vllm_backend_is_a_restorer_not_a_neural_member_subclass():
    r = _restorer()
    assert isinstance(r, Restorer) and not isinstance(r, NeuralMember)
    assert r.language_model() is None  # the model runs inside vLLM: no bits per character from here


def test_vllm_backend_prompt_is_the_fim_layout():
    r = _restorer()
    assert r.prompt("κομων του ", "κλειτου", Hint.span(3, 5)) == SPM_V1.prompt(
        CHAR, "κομων του ", "κλειτου", Hint.span(3, 5)
    )
    long = "α" * 1000
    assert len(r.prompt(long, long, NO_HINT)) == len(SPM_V1.prompt(CHAR, long[-250:], long[:250], NO_HINT))


def test_vllm_backend_converts_beams_to_candidates():
    r = _restorer()
    cands = r.candidates("κομων μουσαιου του ", "κλειτου χαιρειν", Hint.exact(3))
    prompts, params = r.llm.calls[0]
    assert params.beam_width == 20 and params.length_penalty == 0.0 and params.max_tokens >= 4
    assert prompts == [
        {"prompt_token_ids": SPM_V1.prompt(CHAR, "κομων μουσαιου του ", "κλειτου χαιρειν", Hint.exact(3))}
    ]
    assert [c.text for c in cands] == ["ηρα", "ερμ", "ηραικ"]
    assert all(isinstance(c, Candidate) for c in cands)
    assert abs(sum(c.prob for c in cands) - 1) < 1e-9
    assert cands[0].log_score > -1.0  # log-sum-exp of the merged spellings


def test_vllm_backend_readings_from_raw_output():
    fim = _restorer().fim
    prompt = [1, 5, 4, 6]
    out = FakeLLM(READINGS).beam_search([{"prompt_token_ids": prompt}], None)[0]
    assert beams_to_readings(out, len(prompt), fim, k=2) == [("ηρα", -1.0), ("ηρ α", -1.5)]
    assert beams_to_readings(out, len(prompt), fim, k=3) == [("ηρα", -1.0), ("ηρ α", -1.5), ("ερμ", -2.0)]
    assert beams_to_readings(out, len(prompt), fim, k=4)[-1] == ("ηραικ", -3.0)


def test_vllm_backend_restores_a_document_with_the_shared_result_types():
    r = _restorer()
    result = restore_text(r, parse_leiden("κομων μουσαιου του [.3]κλειτου χαιρειν [- - -] ομολογω"), k=5)
    assert isinstance(result, Restoration) and len(result.gaps) == 2
    assert all(isinstance(g, GapResult) for g in result.gaps)
    assert result.gaps[0].hint == Hint.exact(3) and result.gaps[0].best == "ηρα"
    assert result.gaps[1].prefix.endswith("ηρακλειτου χαιρειν ")  # gap 1 sees gap 0 filled
    assert r.llm.calls[0][1].beam_width == 5


def test_vllm_backend_batches_gaps_in_one_call():
    r = _restorer()
    batch = r.candidates_many([("κομων ", " του", Hint.exact(3)), ("ετους ", "", NO_HINT)])
    assert len(batch) == 2 and len(r.llm.calls) == 1 and len(r.llm.calls[0][0]) == 2
    # it declares that it batches: the driver's candidates_many sends the gaps in one call too
    assert r.batches and candidates_many(r, [("κομων ", " του", Hint.exact(3)), ("ετους ", "", NO_HINT)]) == batch
    assert len(r.llm.calls) == 2 and len(r.llm.calls[1][0]) == 2
    with pytest.raises(NotImplementedError):
        r.score_readings("a", "b", NO_HINT, ["x"])
