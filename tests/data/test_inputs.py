"""The one input layer (issue #24): bounded reads, strict UTF-8 and unreadable files as numbered
errors naming the file, byte offset and line; the gap-set and prediction readers go through it."""

from __future__ import annotations

import io
import json
import os
import sys

import pytest

from apollo_restore import inputs
from apollo_restore.data.formats import read_gapset, read_predictions
from apollo_restore.errors import FileError, FormatError
from apollo_restore.inputs import read_lines, read_text

GAP = {"id": "g1", "source": "ddb", "doc": "d", "prefix": "και ", "suffix": " του", "target": "αβ", "hint": 2}


def test_read_text_drops_a_byte_order_mark(tmp_path):
    path = tmp_path / "t.txt"
    path.write_bytes(b"\xef\xbb\xbf" + "ἔτους [.5]".encode())
    assert read_text(path) == "ἔτους [.5]"


def test_invalid_utf8_names_the_file_byte_and_line(tmp_path):
    path = tmp_path / "t.txt"
    path.write_bytes("α\nβγ".encode() + b"\xff\n")
    with pytest.raises(FileError, match=r"E203.*t\.txt.*byte 7, line 2 \(0xff\)") as err:
        read_text(path)
    assert err.value.code == "E203" and err.value.path == str(path)


def test_invalid_utf8_in_a_line_file_counts_from_the_file_start(tmp_path):
    path = tmp_path / "g.jsonl"
    data = b"\n\n" + json.dumps(GAP).encode()[:-1] + b', "x": "\xce"}\n'
    path.write_bytes(data)
    with pytest.raises(FileError, match=rf"byte {data.index(0xCE)}, line 3 \(0xce\)"):
        list(read_lines(path))
    with pytest.raises(FileError, match="E203"):
        read_gapset(path)


@pytest.mark.parametrize("make", ["missing", "folder"])
def test_unreadable_files_are_E202(tmp_path, make):
    path = tmp_path / "x.txt"
    if make == "folder":
        path.mkdir()
    with pytest.raises(FileError, match=r"E202\] cannot read .*x\.txt"):
        read_text(path)
    with pytest.raises(FileError, match="E202"):
        list(read_lines(path))


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_a_file_without_read_permission_is_E202(tmp_path):
    path = tmp_path / "x.txt"
    path.write_text("α")
    path.chmod(0)
    with pytest.raises(FileError, match="E202.*ermission"):
        read_text(path)


def test_reads_are_bounded(tmp_path):
    path = tmp_path / "t.txt"
    path.write_bytes(b"a" * 101)
    with pytest.raises(FileError, match="E204.*more than 100 bytes"):
        read_text(path, limit=100)
    assert read_text(path, limit=101) == "a" * 101
    path.write_bytes(b"short\n" + b"b" * 50 + b"\n")
    with pytest.raises(FileError, match="E204.*in line 2"):
        list(read_lines(path, limit=20))


def test_stdin_from_dev_zero_is_refused_not_read_into_memory(monkeypatch):
    with open("/dev/zero", "rb") as zeros:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(zeros))
        with pytest.raises(FileError, match=r"E204\] standard input holds more than"):
            read_text(inputs.STDIN)


def test_a_gap_set_from_dev_zero_is_refused():
    with pytest.raises(FileError, match=r"E204\] /dev/zero .* in line 1"):
        read_gapset("/dev/zero")


def test_repeated_ids_are_refused_with_both_lines(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in (GAP, {**GAP, "id": "g2"}, GAP)) + "\n")
    with pytest.raises(FormatError, match=r"E201\] .*g\.jsonl, line 3: id 'g1' is already on line 1"):
        read_gapset(path)
    preds = tmp_path / "p.jsonl"
    preds.write_text('{"id": "a", "candidates": []}\n{"id": "a", "candidates": []}\n')
    with pytest.raises(FormatError, match="line 2: id 'a' is already on line 1"):
        read_predictions(preds)


def test_a_gap_check_failure_is_reported_with_the_file_and_line(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text(json.dumps(GAP) + "\n\n" + json.dumps({**GAP, "id": "bad"}) + "\n")

    def check(gap):
        if gap.id == "bad":
            raise ValueError("[E999] refused")

    with pytest.raises(FormatError, match=r"g\.jsonl, line 3: \[E999\] refused"):
        read_gapset(path, check=check)
