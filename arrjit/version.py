"""The package version (one place, read by the disk-cache key and the package)."""
__version__ = "0.1.0"
