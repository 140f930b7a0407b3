import pytest

from durations import format_duration, parse_duration


def test_single_units():
    assert parse_duration("45s") == 45
    assert parse_duration("2m") == 120
    assert parse_duration("3h") == 10800
    assert parse_duration("1d") == 86400


def test_case_and_whitespace():
    assert parse_duration(" 10M ") == 600


@pytest.mark.parametrize("text", ["", "10", "m5", "5 minutes", "1.5h"])
def test_rejects_garbage(text):
    with pytest.raises(ValueError):
        parse_duration(text)


def test_format_duration():
    assert format_duration(0) == "0s"
    assert format_duration(45) == "45s"
    assert format_duration(5400) == "1h30m"
    assert format_duration(90061) == "1d1h1m1s"
