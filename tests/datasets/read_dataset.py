#!/usr/bin/python3
"""Reads a schedforge dataset with h5py and NumPy only (no schedforge code): the example of
datasets/SCHEMA.md, and the Python side of the interop test, which compares what it prints
with what the C++ reader says.

    /usr/bin/python3 read_dataset.py FILE.h5 [SCHEDULE_ROW]
"""
import sys

import h5py
import numpy as np


def text(blob, begin, end):
    """A text field: bytes [begin, end) of a uint8 array."""
    return blob[begin:end].tobytes().decode("utf-8")


def main(path, row):
    # swmr=True also opens a file that is still being written, or was left by a killed writer.
    with h5py.File(path, "r", swmr=True) as f:
        print("schema_version", int(f.attrs["schema_version"]))
        print("producer", f.attrs["producer"])
        print("schedule_feature_names", len(f.attrs["schedule_feature_names"]))
        pipelines = f["pipelines"][:]  # structured array, one row per pipeline
        schedules = f["schedules"][:]  # structured array, one row per schedule
        print("pipelines", len(pipelines))
        print("schedules", len(schedules))
        print("pipeline_features", *f["pipeline_features"].shape)
        print("schedule_features", *f["schedule_features"].shape)

        s = schedules[row]
        status_names = h5py.check_enum_dtype(f["schedules"].dtype["status"])
        status = {v: k for k, v in status_names.items()}[int(s["status"])]
        features = f["schedule_features"][s["features_begin"]:s["features_end"]]  # stages x features
        timings = f["timings"][s["timings_begin"]:s["timings_end"]]
        p = pipelines[s["pipeline_row"]]
        stages = text(f["pipeline_text"], p["stages_begin"], p["stages_end"]).splitlines()
        print("status", status)
        print("sample", int(s["sample"]))
        print("pipeline_id", "%016x" % int(p["id"]))
        print("stages", len(stages), *stages)
        print("features", *features.shape, repr(float(features.astype(np.float64).sum())))
        print("runtime_min", repr(float(s["runtime_min"])))
        print("timings", len(timings), repr(float(timings.min())) if len(timings) else "none")
        print("source_bytes", len(text(f["schedule_text"], s["source_begin"], s["source_end"]).encode("utf-8")))
        print("nest_bytes", len(text(f["schedule_text"], s["nest_begin"], s["nest_end"]).encode("utf-8")))

        # Everything at once, for training: per-schedule feature blocks and runtimes of ok rows.
        ok = schedules["status"] == status_names["ok"]
        print("ok", int(ok.sum()))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0)
