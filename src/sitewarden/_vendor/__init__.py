"""Private copies of third-party code, importable only as sitewarden._vendor.*."""
