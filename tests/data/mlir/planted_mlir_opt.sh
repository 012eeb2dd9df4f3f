#!/bin/sh
# A planted wrong pass for the mlir backend's CTest check (cli/check_campaign.cmake, mode
# mlir): mlir-opt-15 as it is, except that in the optimizing pipeline (the one that fuses)
# every float subtraction of the LLVM dialect output becomes an addition. The campaign
# must find it as a disagreement between mlir-O0 and mlir, localized to Sub.
set -e
mlir-opt-15 "$@"
case "$*" in
  *linalg-fuse-elementwise-ops*)
    out=""
    prev=""
    for a in "$@"; do
      [ "$prev" = "-o" ] && out="$a"
      prev="$a"
    done
    sed -i 's/llvm\.fsub/llvm.fadd/g' "$out"
    ;;
esac
