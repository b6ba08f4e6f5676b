"""Calls an OpenAI-compatible server with the official `openai` Python package, as an application would.

Reads one JSON object on stdin:
    {"base_url": "http://127.0.0.1:8787/v1", "api_key": "...", "request": {model, messages, ...},
     "reflect": {...} or null, "mode": "create" | "stream" | "both", "timeout": seconds}
and prints one JSON object on stdout:
    {"create": {"completion": {...}, "reflect": {...}, "headers": {"x-reflect-...": "..."}},
     "stream": {"chunks": n, "content": "...", "finish_reason": "...", "usage": {...}, "reflect": {...}}}
An HTTP error is not a crash: its part holds {"error": {"status": 400, "body": {...}}}.

`reflect` goes through `extra_body`, the way a client sends the gateway's extension; the gateway's `reflect` object in
the reply is read from `model_extra` (the client keeps unknown fields there). The key is read from stdin, never from
the command line, so it does not show in a process list.
"""

import json
import sys

import openai
from openai import OpenAI


def error_part(error):
    return {"error": {"status": error.status_code, "body": error.body, "type": type(error).__name__}}


def create(client, request, extra_body):
    try:
        raw = client.chat.completions.with_raw_response.create(**request, extra_body=extra_body)
    except openai.APIStatusError as error:
        return error_part(error)
    completion = raw.parse()
    return {
        "completion": completion.to_dict(),
        "reflect": (completion.model_extra or {}).get("reflect"),
        "headers": {name: value for name, value in raw.headers.items() if name.lower().startswith("x-reflect-")},
    }


def stream(client, request, extra_body):
    chunks = 0
    content = []
    finish_reason = None
    usage = None
    reflect = None
    try:
        for chunk in client.chat.completions.create(**request, stream=True, extra_body=extra_body):
            chunks += 1
            for choice in chunk.choices:
                if choice.delta.content:
                    content.append(choice.delta.content)
                if choice.finish_reason is not None:
                    finish_reason = choice.finish_reason
            if chunk.usage is not None:
                usage = chunk.usage.to_dict()
            extra = (chunk.model_extra or {}).get("reflect")
            if extra is not None:
                reflect = extra
    except openai.APIStatusError as error:
        return error_part(error)
    return {"chunks": chunks, "content": "".join(content), "finish_reason": finish_reason, "usage": usage, "reflect": reflect}


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
