#!/bin/sh
echo "coverage tools are not available in the offline Bazel setup (--config=offline)" >&2
exit 1
