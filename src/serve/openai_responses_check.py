"""Calls a Responses API server (`POST /v1/responses`) with the official `openai` Python package, as an application would.

Reads one JSON object on stdin:
    {"base_url": "http://127.0.0.1:8787/v1", "api_key": "...", "request": {model, input, instructions, tools, text, ...},
     "reflect": {...} or null, "mode": "create" | "stream" | "both", "timeout": seconds}
and prints one JSON object on stdout:
    {"create": {"response": {...}, "output_text": "...", "reflect": {...}, "headers": {"x-reflect-...": "..."}},
     "stream": {"events": ["response.created", ...], "text": "...", "response": {...}, "output_text": "...",
                "reflect": {...}}}
An HTTP error is not a crash: its part holds {"error": {"status": 400, "body": {...}, "type": "BadRequestError"}}; an
error event in a stream is raised by the client as `openai.APIError` and reported as
{"error": {"status": null, "body": {...}, "type": "APIError", "events": [...]}}.

`reflect` goes through `extra_body`, the way a client sends the gateway's extension; the gateway's `reflect` object in
the reply is read from `model_extra` (the client keeps unknown fields there). The key is read from stdin, never from
the command line, so it does not show in a process list.
"""

import json
import sys

import openai
from openai import OpenAI


def error_part(error, events=None):
    part = {"status": getattr(error, "status_code", None), "body": error.body, "type": type(error).__name__}
    if events is not None:
        part["events"] = events
    return {"error": part}


def create(client, request, extra_body):
    try:
        raw = client.responses.with_raw_response.create(**request, extra_body=extra_body)
    except openai.APIStatusError as error:
        return error_part(error)
    response = raw.parse()
    return {
        "response": response.to_dict(),
        "output_text": response.output_text,
        "reflect": (response.model_extra or {}).get("reflect"),
        "headers": {name: value for name, value in raw.headers.items() if name.lower().startswith("x-reflect-")},
    }


def stream(client, request, extra_body):
    events = []
    text = []
    final = None
    try:
        for event in client.responses.create(**request, stream=True, extra_body=extra_body):
            events.append(event.type)
            if event.type == "response.output_text.delta":
                text.append(event.delta)
            if event.type in ("response.completed", "response.incomplete"):
                final = event.response
    except openai.APIStatusError as error:
        return error_part(error)
    except openai.APIError as error:
        return error_part(error, events)
    return {
        "events": events,
        "text": "".join(text),
        "response": final.to_dict() if final is not None else None,
        "output_text": final.output_text if final is not None else None,
        "reflect": (final.model_extra or {}).get("reflect") if final is not None else None,
    }


def main():
    spec = json.load(sys.stdin)
    client = OpenAI(base_url=spec["base_url"], api_key=spec["api_key"], max_retries=0, timeout=spec.get("timeout", 60))
    request = dict(spec["request"])
    request.pop("stream", None)
    extra_body = {"reflect": spec["reflect"]} if spec.get("reflect") is not None else None
    mode = spec.get("mode", "both")
    out = {}
    if mode in ("create", "both"):
        out["create"] = create(client, request, extra_body)
    if mode in ("stream", "both"):
        out["stream"] = stream(client, request, extra_body)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
