from pathlib import Path

from harness.run.memory.question_records import CallTail, normalise


def test_answers_are_normalised_as_the_datasets_scripts_do() -> None:
    assert normalise("The Business Administration!") == "business administration"
    assert normalise("  7 May, 2023. ") == "7 may 2023"
    assert normalise("an apple a day") == "apple day"
    assert normalise("Theatre") == "theatre"  # "the" only as a word


def test_the_call_tail_reads_each_complete_line_once(tmp_path: Path) -> None:
    from rundir.calls.calllog import CallRecord, Timing

    def line(seq: int, item: str) -> str:
        return CallRecord(
            run_id="r",
            seq=seq,
            mode="record",
            arm="a",
            item=item,
            turn=0,
            purpose="main",
            vendor="openai",
            route="openai.chat",
            method="POST",
            path="/v1/chat/completions",
            status=200,
            outcome="ok",
            request_hash="h",
            timing=Timing(start=1.0),
        ).to_line()

    path = tmp_path / "calls.jsonl"
    tail = CallTail(path)
    tail.refresh()  # no file yet
    path.write_text(line(1, "i1") + line(2, "i2")[:40])  # the second line is torn
    tail.refresh()
    assert [c.seq for c in tail.by_item[("a", "i1")]] == [1]
    assert ("a", "i2") not in tail.by_item
    path.write_text(line(1, "i1") + line(2, "i2") + line(3, "i1"))
    tail.refresh()
    assert [c.seq for c in tail.by_item[("a", "i1")]] == [1, 3]
    assert [c.seq for c in tail.by_item[("a", "i2")]] == [2]
