"""Experiments: testbeds, host programs and in-process fabrics that measure netweft."""
