"""Builders of benchmark data sets: they read ../shared/data and build items; they measure nothing."""
