"""The fault benchmark's verdict on the two largest kinds' stop points (benchmarks/measure_faults.py): worked out by
hand from the stops it recorded and the kinds' seconds alone."""
from benchmarks.measure_faults import stop_points


def test_each_largest_kind_is_judged_by_the_longest_it_held_the_long_job_against_its_time_alone():
    found = {"alone": {"short_kinds": {"lens": {"seconds": 0.4}, "lens, 128 windows": {"seconds": 25.8},
                                       "paste answer, 128 windows": {"seconds": 10.6}}},
             "largest": {"stopped": [
                 {"kind": "lens, 128 windows", "began_inside": True, "held_the_long_job_seconds": 2.2},
                 {"kind": "lens, 128 windows", "began_inside": True, "held_the_long_job_seconds": 2.4},
                 {"kind": "lens, 128 windows", "ending": "cancelled before it began", "began": False},
                 {"kind": "paste answer, 128 windows", "began_inside": True, "held_the_long_job_seconds": 10.7},
                 {"kind": "paste answer, 128 windows", "began_inside": False, "held_the_long_job_seconds": 0.0}]}}
    assert stop_points(found) == {
        "lens, 128 windows": {"held_seconds_at_most": 2.4, "alone_seconds": 25.8, "before_its_end": True},
        "paste answer, 128 windows": {"held_seconds_at_most": 10.7, "alone_seconds": 10.6, "before_its_end": False}}
