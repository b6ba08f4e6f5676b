"""Re-derives the `langdetect` field of replies.json: langdetect 1.0.9's answer under seeds 0-20.

IFEval calls langdetect.detect unseeded, so its verdict on a borderline reply varies from run to run; the votes
show how firmly it decides. Usage: pip install langdetect==1.0.9 && python bench/language-id/reference.py
"""
import collections
import json
import pathlib

from langdetect import DetectorFactory, LangDetectException, detect

path = pathlib.Path(__file__).with_name("replies.json")
replies = json.loads(path.read_text(encoding="utf-8"))
changed = 0
for reply in replies:
    votes = collections.Counter()
    for seed in range(21):
        DetectorFactory.seed = seed
        try:
            votes[detect(reply["text"])] += 1
        except LangDetectException:
            votes["raises"] += 1
    if dict(votes) != reply["langdetect"]:
        changed += 1
        reply["langdetect"] = dict(votes)
path.write_text(json.dumps(replies, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
print(f"{len(replies)} replies, {changed} changed")
