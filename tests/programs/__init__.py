"""Tests of verifiers_lite/programs: program environments and the interception endpoint."""
