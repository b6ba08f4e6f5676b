"""Calls a server's Messages API with the official `anthropic` Python package, as an application would.

Reads one JSON object on stdin:
    {"base_url": "http://127.0.0.1:8787", "api_key": "...", "request": {model, max_tokens, messages, ...},
     "reflect": {...} or null, "mode": "create" | "stream" | "events" | "all", "timeout": seconds}
and prints one JSON object on stdout:
    {"create": {"message": {...}, "headers": {"x-reflect-...": "..."}},
     "stream": {"texts": ["..."], "message": {...}},
     "events": {"types": ["message_start", ...], "reflect": {...}}}
An HTTP error is not a crash: its part holds {"error": {"status": 400, "body": {...}, "type": "BadRequestError"}}; an
error event in a stream already under way holds the stream's status (200).

`reflect` goes through `extra_body`, the way a client sends the gateway's extension; the client keeps the unknown
`reflect` member of a Message, so `to_dict()` carries it. The key is read from stdin, never from the command line.
"""

import json
import sys

import anthropic
from anthropic import Anthropic


def error_part(error):
    status = getattr(error, "status_code", None)
    return {"error": {"status": status, "body": error.body, "type": type(error).__name__}}


def create(client, request, extra_body):
    try:
        raw = client.messages.with_raw_response.create(**request, extra_body=extra_body)
    except anthropic.APIError as error:
        return error_part(error)
    message = raw.parse()
    return {
        "message": message.to_dict(),
        "headers": {name: value for name, value in raw.headers.items() if name.lower().startswith("x-reflect-")},
    }


def stream(client, request, extra_body):
    texts = []
    try:
        with client.messages.stream(**request, extra_body=extra_body) as events:
            for text in events.text_stream:
                texts.append(text)
            message = events.get_final_message()
    except anthropic.APIError as error:
        return error_part(error)
    return {"texts": texts, "message": message.to_dict()}


def raw_events(client, request, extra_body):
    types = []
    reflect = None
    try:
        for event in client.messages.create(**request, stream=True, extra_body=extra_body):
            types.append(event.type)
            if event.type == "message_delta":
                reflect = (event.model_extra or {}).get("reflect")
    except anthropic.APIError as error:
        return error_part(error)
    return {"types": types, "reflect": reflect}


def main():
    spec = json.load(sys.stdin)
    client = Anthropic(base_url=spec["base_url"], api_key=spec["api_key"], max_retries=0, timeout=spec.get("timeout", 60))
    request = dict(spec["request"])
    request.pop("stream", None)
    extra_body = {"reflect": spec["reflect"]} if spec.get("reflect") is not None else None
    mode = spec.get("mode", "all")
    out = {}
    if mode in ("create", "all"):
        out["create"] = create(client, request, extra_body)
    if mode in ("stream", "all"):
        out["stream"] = stream(client, request, extra_body)
    if mode in ("events", "all"):
        out["events"] = raw_events(client, request, extra_body)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
