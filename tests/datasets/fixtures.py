"""Small files in the two published shapes, written field by field as the datasets write them
(xiaowu0162/LongMemEval's README; snap-research/locomo's locomo10.json), not through the
harness's own models, so a loader that misreads the format fails against them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

LONGMEMEVAL_TYPES = ["single-session-user", "multi-session", "knowledge-update"]


def longmemeval_entry(n: int, qtype: str, *, abstention: bool = False) -> dict[str, Any]:
    qid = f"q{n:03d}" + ("_abs" if abstention else "")
    needle = f"My cousin's dog is called Pepper{n}."
    return {
        "question_id": qid,
        "question_type": qtype,
        "question": f"What is my cousin's dog called? ({n})",
        "answer": f"Pepper{n}" if not abstention else "You did not mention this information.",
        "question_date": "2023/05/30 (Tue) 23:40",
        # Not in date order, as the oracle file is: the loader sorts them.
        "haystack_session_ids": [f"s{n}_b", f"s{n}_a", f"answer_{n}_1"],
        "haystack_dates": [
            "2023/05/21 (Sun) 09:15",
            "2023/05/20 (Sat) 02:21",
            "2023/05/25 (Thu) 18:02",
        ],
        "haystack_sessions": [
            [
                {"role": "user", "content": f"Any tips for baking sourdough? ({n})"},
                {"role": "assistant", "content": "Feed the starter daily."},
            ],
            [
                {"role": "user", "content": f"I need a name for a blog. ({n})"},
                {"role": "assistant", "content": "How about 'Crumbs'?"},
            ],
            [
                {"role": "user", "content": needle, "has_answer": True},
                {"role": "assistant", "content": "What a lovely name!", "has_answer": False},
            ],
        ],
        "answer_session_ids": [] if abstention else [f"answer_{n}_1"],
    }


def longmemeval_file(folder: Path, per_type: int = 4) -> Path:
    entries = []
    n = 0
    for qtype in LONGMEMEVAL_TYPES:
        for k in range(per_type):
            entries.append(
                longmemeval_entry(n, qtype, abstention=k == 0 and qtype == "multi-session")
            )
            n += 1
    entries[min(5, len(entries) - 1)]["answer"] = 3  # the published file has numeric ones too
    path = folder / "longmemeval_s.json"
    path.write_text(json.dumps(entries, indent=1))
    return path


def locomo_sample(sample: str, questions: int = 6) -> dict[str, Any]:
    conversation: dict[str, Any] = {"speaker_a": "Caroline", "speaker_b": "Melanie"}
    dates = ["1:56 pm on 8 May, 2023", "10:37 am on 27 June, 2023", "8:18 pm on 3 July, 2023"]
    for s, date in enumerate(dates, 1):
        conversation[f"session_{s}_date_time"] = date
        conversation[f"session_{s}"] = [
            {"speaker": "Caroline", "dia_id": f"D{s}:1", "text": f"{sample}: session {s} hello"},
            {"speaker": "Melanie", "dia_id": f"D{s}:2", "text": f"{sample}: I painted a lake {s}"},
            {
                "speaker": "Caroline",
                "dia_id": f"D{s}:3",
                "text": f"{sample}: look at this",
                "img_url": ["https://example.invalid/x.jpg"],
                "blip_caption": "a photo of a sunset",
                "query": "sunset",
            },
        ]
    qa: list[dict[str, Any]] = []
    for q in range(questions):
        category = [1, 2, 4, 2, 3, 5][q % 6]
        entry: dict[str, Any] = {
            "question": f"{sample} question {q}: when did Melanie paint a lake?",
            "evidence": [f"D{q % 3 + 1}:2"],
            "category": category,
        }
        if category == 5:
            entry["adversarial_answer"] = "a lighthouse"
        else:
            entry["answer"] = 2022 if q == 1 else f"session {q % 3 + 1}"
        qa.append(entry)
    return {
        "sample_id": sample,
        "conversation": conversation,
        "qa": qa,
        "event_summary": {},
        "observation": {},
        "session_summary": {},
    }


def locomo_file(folder: Path, samples: int = 2, questions: int = 6) -> Path:
    path = folder / "locomo10.json"
    data = [locomo_sample(f"conv-{26 + s}", questions) for s in range(samples)]
    path.write_text(json.dumps(data, indent=1))
    return path
