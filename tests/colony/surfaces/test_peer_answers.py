"""Reading a gateway's tool-call answer: a result, a held call (202), or the Colony error it names."""

from __future__ import annotations

import json

import pytest

from colony.errors import ActionNotExecutedError, PeerError
from colony.surfaces.peer_answers import tool_call_answer

URL = "http://peer.test/v1/tool_call"
HELD = {"ok": False, "status": "held", "approval": {"approval_id": "a-1", "state": "pending"}, "verdict": {}}


def test_a_held_call_is_an_answer_not_an_error() -> None:
    answer = tool_call_answer(URL, 202, json.dumps(HELD).encode())
    assert answer.held and answer.approval == HELD["approval"] and answer.result is None


def test_a_202_without_a_pending_approval_is_the_error_it_names() -> None:
    refused = {"ok": False, "error": {"type": "ActionNotExecutedError", "message": "refused", "verdict": {}}}
    with pytest.raises(ActionNotExecutedError):
        tool_call_answer(URL, 202, json.dumps(refused).encode())
    decided = {**HELD, "approval": {"approval_id": "a-1", "state": "approved"}, "error": {"type": "Nope"}}
    with pytest.raises(PeerError):
        tool_call_answer(URL, 202, json.dumps(decided).encode())
    with pytest.raises(PeerError):  # a held answer is a 202, never a 200
        tool_call_answer(URL, 200, json.dumps(HELD).encode())
