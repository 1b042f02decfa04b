//! Calibration files: board corners for a fixed camera, and optional camera intrinsics.
