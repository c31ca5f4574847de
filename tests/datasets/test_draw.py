from collections import Counter
from pathlib import Path

from harness.datasets import locomo, longmemeval
from harness.datasets.draw import draw
from tests.datasets.fixtures import locomo_file, longmemeval_entry


def _many(tmp_path: Path) -> list:
    import json

    entries = [longmemeval_entry(n, "single-session-user") for n in range(20)]
    entries += [longmemeval_entry(100 + n, "multi-session") for n in range(10)]
    entries += [longmemeval_entry(200 + n, "knowledge-update") for n in range(10)]
    path = tmp_path / "many.json"
    path.write_text(json.dumps(entries))
    return longmemeval.load(path)


def test_strata_get_their_share_and_the_draw_is_reproducible(tmp_path: Path) -> None:
    memories = _many(tmp_path)
    drawn = draw(memories, n=8, seed=7, stratify="question_type")
    assert drawn.drawn == Counter(
        {"single-session-user": 4, "multi-session": 2, "knowledge-update": 2}
    )
    assert drawn.available["single-session-user"] == 20
    again = draw(memories, n=8, seed=7, stratify="question_type")
    assert [m.question.question_id for m in again.memories] == [
        m.question.question_id for m in drawn.memories
    ]
    other = draw(memories, n=8, seed=8, stratify="question_type")
    assert {m.question.question_id for m in other.memories} != {
        m.question.question_id for m in drawn.memories
    }
    ids = [memories.index(m) for m in drawn.memories]
    assert ids == sorted(ids)  # the file's order


def test_largest_remainders_fill_the_count_exactly(tmp_path: Path) -> None:
    memories = _many(tmp_path)
    for n in range(1, 41):
        assert len(draw(memories, n=n, seed=1, stratify="question_type").memories) == n
    assert len(draw(memories, n=500, seed=1).memories) == 40


def test_per_conversation_max_caps_each_conversation_and_passes_the_rest_on(
    tmp_path: Path,
) -> None:
    memories = locomo.load(locomo_file(tmp_path, samples=3, questions=12))
    drawn = draw(memories, n=9, seed=3, stratify="category", per_conversation_max=3)
    per = Counter(m.history.id for m in drawn.memories)
    assert per == Counter({"c.conv-26": 3, "c.conv-27": 3, "c.conv-28": 3})
    assert sum(drawn.drawn.values()) == 9
    capped = draw(memories, n=20, seed=3, stratify="category", per_conversation_max=2)
    assert len(capped.memories) == 6  # three conversations, two each: all there is


def test_no_n_takes_every_question(tmp_path: Path) -> None:
    memories = locomo.load(locomo_file(tmp_path))
    assert len(draw(memories, stratify="category").memories) == len(memories)
