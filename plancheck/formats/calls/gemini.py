"""Gemini's calls: ``{"functionCall": {"id", "name", "args": {...}}}`` parts of a ``content``
(``candidates[i].content.parts``, a request's ``contents[i].parts``), answered by
``{"functionResponse": {"id", "name", "response": {...}}}`` parts of a user turn. The ids are
optional (the Developer API leaves them out): a response without one answers the earliest
unanswered call of the tool it names, as the API pairs them."""

from __future__ import annotations

from typing import Any

from plancheck.formats.found import FoundCall, child, plain_id
from plancheck.formats.shape import CallShape


def read(item: dict[str, Any], pointer: str) -> FoundCall | None:
    call = item.get("functionCall")  # (not `function_call`: OpenAI's legacy chat uses it)
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        return None
    base = child(pointer, "functionCall")
    return FoundCall(pointer, "gemini", call["name"], child(base, "name"), call.get("args"),
                     child(base, "args") if "args" in call else None,
                     call_id=plain_id(call.get("id")))


def result(item: dict[str, Any]) -> tuple[str | None, Any] | None:
    response = item.get("functionResponse")
    if not isinstance(response, dict):
        return None
    return plain_id(response.get("id")), response.get("response")


def answer_name(item: dict[str, Any]) -> str | None:
    response = item.get("functionResponse")
    name = response.get("name") if isinstance(response, dict) else None
    return name if isinstance(name, str) else None


def write(name: str, arguments: Any, call_id: str | None) -> dict[str, Any]:
    call = {"name": name, "args": arguments}
    return {"functionCall": call if call_id is None else {"id": call_id, **call}}


SHAPE = CallShape("gemini", read, detected=True, order=130, result=result,
                  markers=('"functionResponse"',), write=write, answer_name=answer_name,
                  description="Gemini `functionCall` parts, answered by `functionResponse` "
                              "parts")
