from datetime import datetime

import pytest

from harness.datasets.dates import locomo_date, longmemeval_date


def test_longmemeval_dates_as_the_dataset_writes_them() -> None:
    assert longmemeval_date("2023/05/20 (Sat) 02:21") == datetime(2023, 5, 20, 2, 21)
    assert longmemeval_date("2023/05/30 (Tue) 23:40") == datetime(2023, 5, 30, 23, 40)


@pytest.mark.parametrize(
    "text",
    [
        "2023/05/20 (Fri) 02:21",
        "2023-05-20 02:21",
        "2023/05/20 02:21",
        "",
        "2023/13/01 (Mon) 00:00",
    ],
)
def test_a_longmemeval_date_that_is_not_one_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        longmemeval_date(text)


def test_locomo_dates_as_the_dataset_writes_them() -> None:
    assert locomo_date("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56)
    assert locomo_date("10:37 am on 27 June, 2023") == datetime(2023, 6, 27, 10, 37)
    assert locomo_date("12:09 am on 13 Sept, 2023".replace("Sept", "Sep")) == datetime(
        2023, 9, 13, 0, 9
    )
    assert locomo_date("12:30 pm on 1 January, 2024") == datetime(2024, 1, 1, 12, 30)


@pytest.mark.parametrize(
    "text", ["13:56 pm on 8 May, 2023", "1:56 pm on 8 Mai, 2023", "8 May 2023"]
)
def test_a_locomo_date_that_is_not_one_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        locomo_date(text)
