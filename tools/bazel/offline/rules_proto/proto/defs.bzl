"""Offline stand-in for @rules_proto//proto:defs.bzl: Bazel 4.2's native proto rules."""

ProtoInfo = ProtoInfo
proto_lang_toolchain = native.proto_lang_toolchain
proto_library = native.proto_library
